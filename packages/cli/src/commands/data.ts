/**
 * Hosted data (docs/compatibility.md §5): `algo ls`, `mkdir`, `rmdir`, `rm`, `cat`, `cp`. Remote paths are
 * `data://owner/collection/...` (`data://.my/...` is the caller's); `cp` copies both ways and,
 * with -r, whole directories. Anything without a scheme is a local path for `cp` and a data://
 * path for the others. File contents are streamed both ways: a file of any size goes through
 * in small chunks.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AlgohostError, type AlgohostClient, type DataEntry, joinDataUri, parseDataUri } from '@algohost/client';
import { CliError } from '../errors.js';
import { formatBytes, line, printJson, printTable } from '../lib/output.js';
import { Progress } from '../lib/progress.js';
import { meter, readLocal, writeLocal } from '../lib/transfer.js';
import { contextOf, needsFeature, optionsOf, withJson, withProfile } from './common.js';

/** What a server without the endpoint lacks: hosted data, or a connector (s3://…) of the original platform. */
function feature(...uris: string[]): string {
  const other = uris
    .filter(isRemote)
    .map((u) => parseDataUri(u).scheme)
    .find((s) => s !== 'data');
  return other ? `the ${other}:// connector` : 'hosted data';
}
export const isRemote = (p: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(p);
/** A remote argument: `data://…` as given, a bare path taken as `data://…`. */
export const remote = (p: string) => (isRemote(p) ? p : `data://${p.replace(/^\/+/, '')}`);
const baseName = (uri: string) => parseDataUri(uri).path.split('/').pop() ?? '';
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The server's 409 on a refused change, with what to do in CLI terms. */
function conflict(err: unknown, message: string): never {
  if (err instanceof AlgohostError && err.status === 409) throw new CliError(message);
  throw err;
}

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
    const entries = await needsFeature(feature(uri), () => listing(client, uri));
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
    await needsFeature(feature(uri), () => contextOf(cmd).client().data.mkdir(uri)).catch((err) => conflict(err, `${uri} already exists`));
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
    const type = await needsFeature(feature(uri), () => client.data.type(uri));
    if (type === null) throw new CliError(`no such directory: ${uri}`);
    if (type === 'file') throw new CliError(`${uri} is a file: use "algo rm"`);
    const res = await client.data
      .delete(uri, { force })
      .catch((err) => conflict(err, `${uri} is not empty: use "algo rmdir --force" to delete it with everything in it`));
    const deleted = res?.result?.deleted ?? 0;
    line(`Deleted ${uri}${deleted > 0 ? ` (${plural(deleted, 'file')})` : ''}`);
  });

  withProfile(program.command('rm').argument('<paths...>', 'data:// files to delete').description('delete data files')).action(
    async (paths: string[], _o, cmd: Command) => {
      const client = contextOf(cmd).client();
      for (const p of paths) {
        const uri = remote(p);
        const type = await needsFeature(feature(uri), () => client.data.type(uri));
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
        const res = await needsFeature(feature(uri), () => client.data.stream(uri)).catch((err) => {
          if (err instanceof AlgohostError && err.code === 'EISDIR') throw new CliError(`${uri} is a directory: use "algo ls"`);
          throw err;
        });
        if (!res.body) continue;
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          // Wait for each chunk to be taken (a slow pipe), so that memory stays flat.
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
    await needsFeature(feature(...paths), () => copy(client, sources, dest, Boolean(recursive)));
  });
}

/** A directory's entries across pages; a file is listed as itself (as `ls FILE` does). */
async function listing(client: AlgohostClient, uri: string): Promise<DataEntry[]> {
  const all: DataEntry[] = [];
  try {
    for await (const e of client.data.entries(uri)) all.push(e);
    return all;
  } catch (err) {
    if (!(err instanceof AlgohostError && err.code === 'ENOTDIR')) throw err;
  }
  const st = await client.data.stat(uri);
  if (st?.type !== 'file') throw new CliError(`${uri} changed while it was listed; try again`);
  return [{ type: 'file', filename: baseName(uri), size: st.size ?? 0, last_modified: st.lastModified ?? '' }];
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

  // Everything is planned (and every source checked) before anything is written.
  const steps: Step[] = [];
  for (const src of sources) {
    const fromRemote = isRemote(src);
    const name = fromRemote ? baseName(src) : path.basename(path.resolve(src));
    const target = destIsDir ? (toRemote ? joinDataUri(dest, name) : path.join(dest, name)) : toRemote ? dest.replace(/\/+$/, '') : dest;
    await plan(client, src, fromRemote, target, toRemote, recursive, steps);
  }
  if (destIsDir && !toRemote) fs.mkdirSync(dest, { recursive: true });

  const files = steps.filter((s): s is Extract<Step, { kind: 'file' }> => s.kind === 'file');
  const total = files.every((f) => f.size !== undefined) ? files.reduce((n, f) => n + (f.size ?? 0), 0) : undefined;
  const progress = new Progress(`Copying ${plural(files.length, 'file')}`);
  let bytes = 0;
  try {
    progress.update(0, total);
    for (const step of steps) {
      if (step.kind === 'mkdir-local') fs.mkdirSync(step.path, { recursive: true });
      else if (step.kind === 'mkdir-remote') {
        if ((await client.data.type(step.uri)) === null) await client.data.mkdir(step.uri);
      } else {
        await copyFile(client, step, (n) => progress.update((bytes += n), total));
      }
    }
  } finally {
    progress.done();
  }
  line(`Copied ${plural(files.length, 'file')} (${formatBytes(bytes)}) to ${dest}`);
}

/** One file, streamed from where it is to where it goes; `onBytes` sees the bytes as they pass. */
async function copyFile(client: AlgohostClient, step: Extract<Step, { kind: 'file' }>, onBytes: (n: number) => void): Promise<void> {
  let size = step.size;
  let body: ReadableStream<Uint8Array>;
  if (step.fromRemote) {
    const res = await client.data.stream(step.from);
    const length = res.headers.get('content-length');
    if (length !== null) size = Number(length);
    body = res.body ?? new Blob([]).stream();
  } else {
    size = (await fs.promises.stat(step.from)).size;
    body = readLocal(step.from);
  }
  body = body.pipeThrough(meter((chunk) => onBytes(chunk.byteLength)));
  if (!step.toRemote) return writeLocal(body, step.to);
  try {
    await client.data.put(step.to, body, { size });
  } catch (err) {
    // The server's hint names the API call; say it in CLI terms.
    const missing = err instanceof AlgohostError && err.status === 404 && /^folder (\S+) does not exist/.exec(err.message);
    if (missing) throw new CliError(`folder ${missing[1]} does not exist: create it with "algo mkdir ${missing[1]}"`);
    throw err;
  }
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
    const st = await client.data.stat(src);
    if (st === null) throw new CliError(`${src} does not exist`);
    if (st.type === 'file') return void steps.push({ kind: 'file', from: src, to: target, size: st.size, fromRemote, toRemote });
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
