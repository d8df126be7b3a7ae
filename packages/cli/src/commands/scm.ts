/**
 * `algo scm …`: SCM configurations (list; add, enable, disable, delete for admins), this
 * account's token status (endpoint 1), and "sync now" of an algorithm hosted at a provider.
 * Authorizing a configuration is a browser flow: the web UI's Settings page runs it.
 */
import type { Command } from 'commander';
import { line, notice, printJson, printTable } from '../lib/output.js';
import { contextOf, needsFeature, oneOf, optionsOf, ownerAndName, withJson, withProfile } from './common.js';

export function register(program: Command): void {
  const scm = withProfile(program.command('scm').description('source control: SCM configurations, token status, sync now'));

  withJson(withProfile(scm.command('list').description('list SCM configurations (the internal SCM first)'))).action(
    async (_o, cmd: Command) => {
      const opts = optionsOf<{ json?: boolean }>(cmd);
      const configs = await needsFeature('SCM configurations', () => contextOf(cmd).client().scms.list());
      if (opts.json) return printJson(configs);
      printTable(
        ['ID', 'PROVIDER', 'NAME', 'DEFAULT', 'ENABLED', 'WEB'],
        configs.map((c) => [c.id, c.provider, c.name, c.default ? 'yes' : '', c.enabled ? 'yes' : 'no', c.urls.web]),
      );
    },
  );

  withJson(
    withProfile(
      scm.command('status').argument('<id>', 'configuration id').description("ask the provider whether it accepts this account's token"),
    ),
  ).action(async (id: string, _o, cmd: Command) => {
    const opts = optionsOf<{ json?: boolean }>(cmd);
    const s = await contextOf(cmd).client().scms.tokenStatus(id);
    if (opts.json) return printJson(s);
    line(`authorization: ${s.authorization_status}`);
    if (s.scm_username) line(`provider user: ${s.scm_username}`);
    for (const o of s.scm_organizations) line(`organization:  ${o.scm_org_username} (${o.access_level})`);
    if (s.authorization_status === 'unauthorized') {
      notice(
        'Authorize it in the web UI (Settings, Source Code Management), checking it is this configuration: several may exist for one provider.',
      );
    }
  });

  withJson(
    withProfile(
      scm
        .command('sync')
        .argument('<owner>', 'owner, or owner/name')
        .argument('[name]', 'algorithm name')
        .description("fetch the provider's main branch of an externally hosted algorithm and build it if it is new"),
    ),
  ).action(async (first: string, second: string | undefined, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(first, second);
    const opts = optionsOf<{ json?: boolean }>(cmd);
    const r = await contextOf(cmd).client().scms.sync(owner, name);
    if (opts.json) return printJson(r);
    line(r.result);
  });

  withJson(
    withProfile(
      scm
        .command('add')
        .description('add an external SCM configuration (admins); register the OAuth app with callback {server}/v1/scms/oauth/callback')
        .requiredOption('--provider <kind>', 'github, gitlab, bitbucket or gitea', oneOf('github', 'gitlab', 'bitbucket', 'gitea'))
        .requiredOption('--web <url>', 'the provider address, e.g. https://github.com')
        .requiredOption('--client-id <id>', 'OAuth client id')
        .requiredOption('--client-secret <secret>', 'OAuth client secret (stored sealed, never shown again)')
        .option('--api <url>', 'REST API base (derived from --web when omitted)')
        .option('--ssh <url>', 'SSH address shown to users (ssh://git@host when omitted)')
        .option('--name <name>', 'the provider address shown (the host of --web when omitted)')
        .option('--default', 'offer it first in the web UI')
        .option('--disabled', 'create it disabled'),
    ),
  ).action(async (_o, cmd: Command) => {
    const o = optionsOf<{
      /** Checked by the option's parser (oneOf). */
      provider: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
      web: string;
      clientId: string;
      clientSecret: string;
      api?: string;
      ssh?: string;
      name?: string;
      default?: boolean;
      disabled?: boolean;
      json?: boolean;
    }>(cmd);
    const c = await contextOf(cmd)
      .client()
      .scms.create({
        provider: o.provider,
        name: o.name,
        default: o.default ?? false,
        enabled: !o.disabled,
        urls: { web: o.web, api: o.api, ssh: o.ssh },
        oauth: { client_id: o.clientId, client_secret: o.clientSecret },
      });
    if (o.json) return printJson(c);
    line(`added ${c.provider} configuration ${c.id} (${c.name})`);
  });

  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    withJson(
      withProfile(
        scm.command(verb).argument('<id>', 'configuration id').description(`${verb} an SCM configuration for new algorithms (admins)`),
      ),
    ).action(async (id: string, _o, cmd: Command) => {
      const opts = optionsOf<{ json?: boolean }>(cmd);
      const c = await contextOf(cmd).client().scms.update(id, { enabled });
      if (opts.json) return printJson(c);
      line(`${c.id} (${c.name}) is ${c.enabled ? 'enabled' : 'disabled'}`);
    });
  }

  withProfile(
    scm.command('delete').argument('<id>', 'configuration id').description('delete an SCM configuration that backs no algorithm (admins)'),
  ).action(async (id: string, _o, cmd: Command) => {
    await contextOf(cmd).client().scms.delete(id);
    line(`deleted ${id}`);
  });
}
