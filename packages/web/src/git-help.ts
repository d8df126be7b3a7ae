/** How to reach an algorithm's repository from a terminal, with the key left as a placeholder. */

export const KEY_PLACEHOLDER = 'API_KEY';

/** `http://host/git/o/n.git` → `http://user:API_KEY@host/git/o/n.git`. */
export function authenticatedUrl(gitUrl: string, username: string): string {
  try {
    const u = new URL(gitUrl);
    u.username = username;
    u.password = KEY_PLACEHOLDER;
    return u.toString();
  } catch {
    return gitUrl;
  }
}

export function cloneCommand(gitUrl: string, username: string, directory: string): string {
  return `git clone ${authenticatedUrl(gitUrl, username)} ${directory}`;
}
