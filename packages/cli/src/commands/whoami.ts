/** `algo whoami`: whose key the profile holds, whether it acts as an admin, what it may do. */
import type { Command } from 'commander';
import { line, printJson } from '../lib/output.js';
import { contextOf, optionsOf, withJson, withProfile } from './common.js';

export function register(program: Command): void {
  withJson(
    withProfile(program.command('whoami').description("show the account of the profile's credential, its capabilities and organizations")),
  ).action(async (_o, cmd: Command) => {
    const opts = optionsOf<{ json?: boolean }>(cmd);
    const me = await contextOf(cmd).client().whoami();
    if (opts.json) return printJson(me);
    line(`${me.username}${me.admin ? ' (admin)' : ''}`);
    line(`credential:    ${CREDENTIALS[me.credential] ?? me.credential}`);
    line(`capabilities:  ${me.capabilities.length ? me.capabilities.join(', ') : 'none'}`);
    if (me.organizations) {
      const orgs = me.organizations.map((o) => (o.role === 'owner' ? `${o.name} (owner)` : o.name));
      line(`organizations: ${orgs.length ? orgs.join(', ') : 'none'}`);
    }
  });
}

const CREDENTIALS: Record<string, string> = {
  key: 'API key',
  admin_key: 'admin API key',
  session: 'signed-in session',
  call_key: 'key of an algorithm call',
};
