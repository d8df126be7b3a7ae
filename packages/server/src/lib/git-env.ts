/**
 * The environment of every git the server runs (repository hosting, smart HTTP, builds, backups).
 * git reads no user or system config, so a host's ~/.gitconfig or /etc/gitconfig cannot change
 * hooks, paths, transfer limits or output formats under the server; it never waits on a prompt;
 * and its messages, which the server parses and relays, are in the C locale.
 */
export function predictableGitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
  };
}
