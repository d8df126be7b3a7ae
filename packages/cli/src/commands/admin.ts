/** `algo admin status` and `algo admin audit`: the cluster's health and its audit log, for admins. */
import type { Command } from 'commander';
import { line, printJson, printTable } from '../lib/output.js';
import { contextOf, needsFeature, optionsOf, positiveInt, withJson, withProfile } from './common.js';

export function register(program: Command): void {
  const admin = withProfile(program.command('admin').description('cluster administration (needs an admin key or an admin session)'));
  withJson(
    withProfile(admin.command('status').description('version, database, blob store, builds, warm runners, calls per minute, uptime')),
  ).action(async (_o, cmd: Command) => {
    const opts = optionsOf<{ json?: boolean }>(cmd);
    const s = await needsFeature('the admin status', () => contextOf(cmd).client().adminStatus());
    if (opts.json) return printJson(s);
    line(`version:          ${s.version}`);
    line(`database:         ${s.database}`);
    line(`blob store:       ${s.blob_store}`);
    line(`builds:           ${s.builds.queued} queued, ${s.builds.running} running`);
    line(`warm runners:     ${s.runners.warm}`);
    line(`calls per minute: ${s.calls_per_minute}`);
    line(`uptime:           ${duration(s.uptime_seconds)}`);
  });

  withJson(
    withProfile(
      admin
        .command('audit')
        .description('the audit log, newest first: keys, users, organizations, settings, ACLs, sign-ins')
        .option('--actor <account>', 'only this account’s actions')
        .option('--action <name>', 'only this action (key.create) or a dotted prefix of actions (key)')
        .option('--limit <n>', 'how many', positiveInt, 50),
    ),
  ).action(async (_o, cmd: Command) => {
    const opts = optionsOf<{ actor?: string; action?: string; limit: number; json?: boolean }>(cmd);
    const page = await needsFeature('the audit log', () =>
      contextOf(cmd).client().adminAudit({ actor: opts.actor, action: opts.action, limit: opts.limit }),
    );
    if (opts.json) return printJson(page.results);
    printTable(
      ['WHEN', 'ACTOR', 'CREDENTIAL', 'ACTION', 'STATUS', 'TARGET', 'ADDRESS'],
      page.results.map((e) => [e.at, e.actor ?? '-', e.credential ?? '-', e.action, e.status, e.target, e.address ?? '-']),
    );
  });
}

/** 93784 → "1d 2h 3m 4s". */
function duration(seconds: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(seconds));
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (rest >= size || parts.length) parts.push(`${Math.floor(rest / size)}${unit}`);
    rest %= size;
  }
  parts.push(`${rest}s`);
  return parts.join(' ');
}
