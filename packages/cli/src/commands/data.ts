/**
 * Hosted data (compat §5): `algo ls`, `mkdir`, `rmdir`, `rm`, `cat`, `cp`. Remote paths are
 * `data://owner/collection/...` (`data://.my/...` is the caller's); `cp` copies both ways and,
 * with -r, whole directories. Anything without a scheme is a local path for `cp` and a data://
 * path for the others.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { type AlgohostClient, type DataEntry, joinDataUri, parseDataUri } from '@algohost/client';
import { CliError } from '../errors.js';
import { formatBytes, line, printJson, printTable } from '../lib/output.js';
import { Progress } from '../lib/progress.js';
import { contextOf, needsFeature, optionsOf, withJson, withProfile } from './common.js';

const FEATURE = 'hosted data';
const isRemote = (p: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(p);
/** A remote argument: `data://…` as given, a bare path taken as `data://…`. */
const remote = (p: string) => (isRemote(p) ? p : `data://${p.replace(/^\/+/, '')}`);
const baseName = (uri: string) => parseDataUri(uri).path.split('/').pop() ?? '';

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('ls')
        .argument('[path]', 'a data:// directory (default: data://.my, your collections)')
        .option('-l, --long', 'sizes and modification times')
        .description('list a data directory'),
    ),
  ).action(async (p: string | undefined, _o, cmd: Command) => {
    const { json, long } = optionsOf<{ json?: boolean; long?: boolean }>(cmd);
    const client = contextOf(cmd).client();
    const uri = remote(p ?? 'data://.my');
    const entries = await needsFeature(FEATURE, async () => {
      const all: DataEntry[] = [];
      for await (const e of client.data.entries(uri)) all.push(e);
      return all;
    });
    if (json) return printJson(entries);
    if (long) {
      return printTable(
        ['SIZE', 'LAST MODIFIED', 'NAME'],
        entries.map((e) => (e.type === 'folder' ? ['-', '', `${e.name}/`] : [String(e.size), e.last_modified, e.filename])),
      );
    }
    for (const e of entries) line(e.type === 'folder' ? `${e.name}/` : e.filename);
  });

  withProfile(
    program.command('mkdir').argument('<path>', 'data:// directory to create').description('create a data collection or folder'),
  ).action(async (p: string, _o, cmd: Command) => {
    const uri = remote(p);
    await needsFeature(FEATURE, () => contextOf(cmd).client().data.mkdir(uri));
    line(`Created ${uri}`);
  });

  withProfile(
    program
      .command('rmdir')
      .argument('<path>', 'data:// directory to delete')
      .option('-f, --force', 'delete it even when it is not empty')
      .description('delete a data directory'),
  ).action(async (p: string, _o, cmd: Command) => {
    const { force } = optionsOf<{ force?: boolean }>(cmd);
    const client = contextOf(cmd).client();
    const uri = remote(p);
    const type = await needsFeature(FEATURE, () => client.data.type(uri));
    if (type === null) throw new CliError(`no such directory: ${uri}`);
    if (type === 'file') throw new CliError(`${uri} is a file: use "algo rm"`);
    const res = await client.data.delete(uri, { force });
    line(`Deleted ${uri}${res?.result?.deleted !== undefined ? ` (${res.result.deleted} deleted)` : ''}`);
  });

  withProfile(program.command('rm').argument('<paths...>', 'data:// files to delete').description('delete data files')).action(
    async (paths: string[], _o, cmd: Command) => {
      const client = contextOf(cmd).client();
      for (const p of paths) {
        const uri = remote(p);
        const type = await needsFeature(FEATURE, () => client.data.type(uri));
        if (type === null) throw new CliError(`no such file: ${uri}`);
        if (type === 'directory') throw new CliError(`${uri} is a directory: use "algo rmdir"`);
        await client.data.delete(uri);
        line(`Deleted ${uri}`);
      }
    },
  );

  withProfile(program.command('cat').argument('<paths...>', 'data:// files').description('print data files to stdout')).action(
    async (paths: string[], _o, cmd: Command) => {
      const client = contextOf(cmd).client();
      for (const p of paths) {
        const uri = remote(p);
        const res = await needsFeature(FEATURE, () => client.data.stream(uri));
        if (res.headers.get('x-data-type') === 'directory') {
          await res.body?.cancel();
          throw new CliError(`${uri} is a directory: use "algo ls"`);
        }
        if (!res.body) continue;
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          await new Promise<void>((resolve, reject) => process.stdout.write(value, (err) => (err ? reject(err) : resolve())));
        }
      }
    },
  );

  withProfile(
    program
      .command('cp')
      .argument('<paths...>', 'sources (local paths or data:// URIs), then the destination')
      .option('-r, --recursive', 'copy directories and everything in them')
      .description('copy files between this machine and hosted data (either way)'),
  ).action(async (paths: string[], _o, cmd: Command) => {
    if (paths.length < 2) throw new CliError('give at least one source and a destination: algo cp <source>... <dest>');
    const sources = paths.slice(0, -1);
    const dest = paths[paths.length - 1]!;
    const { recursive } = optionsOf<{ recursive?: boolean }>(cmd);
    const client = contextOf(cmd).client();
    await needsFeature(FEATURE, () => copy(client, sources, dest, Boolean(recursive)));
  });
}

type Step =
  | { kind: 'mkdir-remote'; uri: string }
  | { kind: 'mkdir-local'; path: string }
  | { kind: 'file'; from: string; to: string; size?: number; fromRemote: boolean; toRemote: boolean };

async function copy(client: AlgohostClient, sources: string[], dest: string, recursive: boolean): Promise<void> {
  const toRemote = isRemote(dest);
  if (!toRemote && sources.every((s) => !isRemote(s))) {
    throw new CliError('one side of "algo cp" must be a data:// URI (use your shell\'s cp for local copies)');
  }
  // A destination is a directory to copy into when it ends with '/', is an existing directory,
  // or several sources go to it.
  const destIsDir =
    dest.endsWith('/') ||
    sources.length > 1 ||
    (toRemote ? (await client.data.type(dest)) === 'directory' : fs.existsSync(dest) && fs.statSync(dest).isDirectory());
  if (sources.length > 1 && !toRemote && !fs.existsSync(dest)) fs.mkdirSync(dest, { recursive: true });

  const steps: Step[] = [];
  for (const src of sources) {
    const fromRemote = isRemote(src);
    const name = fromRemote ? baseName(src) : path.basename(path.resolve(src));
    const target = destIsDir ? (toRemote ? joinDataUri(dest, name) : path.join(dest, name)) : toRemote ? dest.replace(/\/+$/, '') : dest;
    await plan(client, src, fromRemote, target, toRemote, recursive, steps);
  }

  const files = steps.filter((s): s is Extract<Step, { kind: 'file' }> => s.kind === 'file');
  const total = files.every((f) => f.size !== undefined) ? files.reduce((n, f) => n + (f.size ?? 0), 0) : undefined;
  const progress = new Progress(`Copying ${files.length} file${files.length === 1 ? '' : 's'}`);
  let done = 0;
  let bytes = 0;
  try {
    progress.update(0, total);
    for (const step of steps) {
      if (step.kind === 'mkdir-local') fs.mkdirSync(step.path, { recursive: true });
      else if (step.kind === 'mkdir-remote') {
        if ((await client.data.type(step.uri)) === null) await client.data.mkdir(step.uri);
      } else {
        const content = step.fromRemote
          ? await client.data.get(step.from, { onProgress: (n) => progress.update(bytes + n, total) })
          : new Uint8Array(await fs.promises.readFile(step.from));
        if (step.toRemote) await client.data.put(step.to, content);
        else {
          fs.mkdirSync(path.dirname(path.resolve(step.to)), { recursive: true });
          await fs.promises.writeFile(step.to, content);
        }
        bytes += content.byteLength;
        done++;
        progress.update(bytes, total);
      }
    }
  } finally {
    progress.done();
  }
  line(`Copied ${done} file${done === 1 ? '' : 's'} (${formatBytes(bytes)}) to ${dest}`);
}

/** Adds the steps that copy `src` to `target`, walking directories when `recursive`. */
async function plan(
  client: AlgohostClient,
  src: string,
  fromRemote: boolean,
  target: string,
  toRemote: boolean,
  recursive: boolean,
  steps: Step[],
): Promise<void> {
  if (fromRemote) {
    const type = await client.data.type(src);
    if (type === null) throw new CliError(`no such file or directory: ${src}`);
    if (type === 'file') return void steps.push({ kind: 'file', from: src, to: target, fromRemote, toRemote });
    if (!recursive) throw new CliError(`${src} is a directory: use "algo cp -r"`);
    steps.push(toRemote ? { kind: 'mkdir-remote', uri: target } : { kind: 'mkdir-local', path: target });
    for await (const e of client.data.entries(src)) {
      const name = e.type === 'folder' ? e.name : e.filename;
      const child = toRemote ? joinDataUri(target, name) : path.join(target, name);
      if (e.type === 'folder') await plan(client, joinDataUri(src, name), true, child, toRemote, recursive, steps);
      else steps.push({ kind: 'file', from: joinDataUri(src, name), to: child, size: e.size, fromRemote, toRemote });
    }
    return;
  }
  const stat = fs.statSync(src);
  if (stat.isFile()) return void steps.push({ kind: 'file', from: src, to: target, size: stat.size, fromRemote, toRemote });
  if (!stat.isDirectory()) throw new CliError(`${src} is neither a file nor a directory`);
  if (!recursive) throw new CliError(`${src} is a directory: use "algo cp -r"`);
  steps.push(toRemote ? { kind: 'mkdir-remote', uri: target } : { kind: 'mkdir-local', path: target });
  for (const entry of fs.readdirSync(src, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const child = toRemote ? joinDataUri(target, entry.name) : path.join(target, entry.name);
    await plan(client, path.join(src, entry.name), false, child, toRemote, recursive, steps);
  }
}
