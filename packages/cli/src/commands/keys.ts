/**
 * `algo keys`: list, create and revoke the API keys of an account (the profile's username, or
 * --user; an admin key may manage anyone's).
 */
import type { Command } from 'commander';
import type { Capability } from '@algohost/client';
import { line, notice, printJson, printTable } from '../lib/output.js';
import { contextOf, optionsOf, withJson, withProfile } from './common.js';

interface KeysOptions {
  user?: string;
  json?: boolean;
  description?: string;
  capabilities?: string;
  admin?: boolean;
}

const CAPABILITIES = ['manage_algorithms', 'call_algorithms', 'read_data', 'write_data'];

export function register(program: Command): void {
  const keys = withProfile(
    program
      .command('keys')
      .description('list, create and revoke API keys')
      .option('--user <name>', 'the account whose keys these are (default: the username of the profile)'),
  );

  withJson(withProfile(keys.command('list', { isDefault: true }).description('list the keys of the account (without secrets)'))).action(
    async (_o, cmd: Command) => {
      const opts = optionsOf<KeysOptions>(cmd);
      const ctx = contextOf(cmd);
      const list = await ctx.client().keys.list(ctx.account(opts.user));
      if (opts.json) return printJson(list);
      printTable(
        ['ID', 'PREFIX', 'KIND', 'CREATED', 'CAPABILITIES', 'DESCRIPTION'],
        list.map((k) => [k.id, `${k.prefix}…`, k.kind, k.created_at, k.capabilities.join(','), k.description ?? '']),
      );
    },
  );

  withJson(
    withProfile(
      keys
        .command('create')
        .description('create a key; its secret is printed once, here')
        .option('--description <text>', 'what the key is for')
        .option('--capabilities <list>', `comma-separated, from ${CAPABILITIES.join(', ')} (default: all)`)
        .option('--admin', 'an admin key (needs an admin key)'),
    ),
  ).action(async (_o, cmd: Command) => {
    const opts = optionsOf<KeysOptions>(cmd);
    const ctx = contextOf(cmd);
    const capabilities = opts.capabilities
      ?.split(',')
      .map((c) => c.trim())
      .filter(Boolean) as Capability[] | undefined;
    const created = await ctx.client().keys.create(ctx.account(opts.user), {
      kind: opts.admin ? 'admin' : undefined,
      capabilities,
      description: opts.description,
    });
    if (opts.json) return printJson(created);
    line(created.key);
    notice(`Created key ${created.id} (${created.capabilities.join(', ')}). It is shown only this once.`);
  });

  withProfile(keys.command('revoke').argument('<key_id>', 'id from "algo keys list"').description('revoke a key')).action(
    async (id: string, _o, cmd: Command) => {
      const opts = optionsOf<KeysOptions>(cmd);
      const ctx = contextOf(cmd);
      await ctx.client().keys.revoke(ctx.account(opts.user), id);
      line(`Revoked key ${id}`);
    },
  );
}
