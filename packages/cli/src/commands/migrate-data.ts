/**
 * `algo migrate-data <owner | data://owner/collection>`: copies hosted data collections to
 * another cluster (`--to <profile>`) or owner (`--to-owner`) through the API, as docs/compatibility.md §9.4 says
 * they are migrated ("separately, through the API"):
 *
 *   1. every collection is created at the destination with the source's read ACL (an existing
 *      one gets its ACL set to the source's), then its folders, empty ones included;
 *   2. every file is streamed from the source to the destination (never held in memory) while
 *      a SHA-256 of the bytes read is computed; the destination copy is then read back and its
 *      SHA-256 compared, so a copy counts only once the destination holds exactly those bytes;
 *   3. each verified copy is appended to a manifest under ~/.algorithmia/migrations/, one JSON
 *      line per file: a run that is interrupted (killed, a dropped connection, a failed check)
 *      is resumed by running the same command again, which skips the files the manifest shows
 *      as copied whose source is unchanged (same size and modification time) and whose
 *      destination copy is still there with that size.
 *
 * Files at the destination that the source does not have are left alone.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AlgohostError, type AlgohostClient, type DataAcl, joinDataUri, parseDataUri } from '@algohost/client';
import { configDir, displayPath } from '../config.js';
import { Context } from '../context.js';
import { CliError, describeError } from '../errors.js';
import { formatBytes, line, notice, printJson, printTable } from '../lib/output.js';
import { Progress } from '../lib/progress.js';
import { drain, meter } from '../lib/transfer.js';
import { needsFeature, optionsOf, withJson, withProfile } from './common.js';

interface Options {
  profile?: string;
  to?: string;
  toOwner?: string;
  dryRun?: boolean;
  json?: boolean;
}

export interface CollectionReport {
  source: string;
  destination: string;
  acl: DataAcl;
  /** created; acl-updated (it existed with another ACL); exists; or, in a dry run, the same with "would-". */
  action: string;
}

export interface FileReport {
  source: string;
  destination: string;
  size: number;
  /** Known for copied files, and for skipped ones from the manifest. */
  sha256: string | null;
  action: 'copied' | 'skipped' | 'planned';
}

export interface DataMigrationReport {
  source: string;
  destination: string;
  source_server: string;
  destination_server: string;
  dry_run: boolean;
  collections: CollectionReport[];
  files: FileReport[];
  copied: number;
  skipped: number;
  bytes_copied: number;
  bytes_skipped: number;
  manifest: string;
}

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('migrate-data')
        .argument('<source>', 'owner (all of its collections you can read), or data://owner/collection')
        .description('copy hosted data collections to another cluster or owner, verified by SHA-256 (run again to resume)')
        .option('--to <profile>', 'profile of the destination cluster (default: the source profile)')
        .option('--to-owner <name>', "destination owner (default: the source's owner; must differ on the same cluster)")
        .option('--dry-run', 'show what would be copied, change nothing'),
    ),
  ).action(async (source: string, _o, cmd: Command) => {
    const opts = optionsOf<Options>(cmd);
    const from = Context.from({ profile: opts.profile });
    const to = opts.to ? Context.from({ profile: opts.to }) : from;
    const report = await needsFeature('hosted data', () => migrateData(from, to, source, opts));
    if (opts.json) return printJson(report);
    printTable(
      ['COLLECTION', 'DESTINATION', 'ACL', 'ACTION'],
      report.collections.map((c) => [c.source, c.destination, aclName(c.acl), c.action]),
    );
    const verb = report.dry_run ? 'Would copy' : 'Copied';
    const skipped = report.skipped ? `, skipped ${report.skipped} already copied (${formatBytes(report.bytes_skipped)})` : '';
    const verified = !report.dry_run && report.copied ? '; every copy verified by SHA-256' : '';
    line(`${verb} ${plural(report.copied, 'file')} (${formatBytes(report.bytes_copied)})${skipped}${verified}`);
  });
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const normalizeServer = (url: string) => url.replace(/\/+$/, '').toLowerCase();

function aclName(acl: DataAcl): string {
  const read = acl.read;
  if (read.length === 0) return 'private';
  if (read.length === 1 && read[0] === 'user://*') return 'public';
  if (read.length === 1 && read[0] === 'algo://.my/*') return 'my algorithms';
  return read.join(',');
}

const sameAcl = (a: DataAcl, b: DataAcl) => [...a.read].sort().join('\n') === [...b.read].sort().join('\n');

/** `owner`, `owner/collection`, `data://owner[/collection]`; `.my` is the profile's account when known. */
function parseSource(arg: string, ctx: Context): { owner: string; collection?: string } {
  const ref = parseDataUri(arg);
  if (ref.scheme !== 'data') throw new CliError(`migrate-data copies hosted data (data://…), not ${ref.scheme}://`);
  const parts = ref.path.split('/');
  if (!ref.path || parts.length > 2 || parts.some((p) => p === '')) {
    throw new CliError(`"${arg}" is not an owner or a collection: write owner, data://owner or data://owner/collection`);
  }
  const [first, collection] = parts as [string, string | undefined];
  const owner = first === '.my' ? ctx.profile().username || '.my' : first;
  return collection === undefined ? { owner } : { owner, collection };
}

// --- the resume manifest -----------------------------------------------------------------------

interface ManifestRecord {
  /** `collection/folder/file`, relative to the owner. */
  path: string;
  size: number;
  last_modified: string;
  sha256: string;
  copied_at: string;
}

/**
 * One file per (source cluster and owner, destination cluster and owner), one JSON line per
 * verified copy, appended as each copy is verified: an interruption loses at most the line
 * being written, and a torn last line is ignored when read back.
 */
class Manifest {
  readonly file: string;
  private readonly records = new Map<string, ManifestRecord>();

  constructor(sourceServer: string, sourceOwner: string, destServer: string, destOwner: string) {
    const part = (server: string, owner: string) => `${owner}@${new URL(server).host}`.replace(/[^A-Za-z0-9._@-]/g, '_');
    this.file = path.join(configDir(), 'migrations', `data--${part(sourceServer, sourceOwner)}--${part(destServer, destOwner)}.jsonl`);
    let text = '';
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new CliError(`cannot read ${displayPath(this.file)}: ${(err as Error).message}`);
    }
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue;
      try {
        const r = JSON.parse(raw) as ManifestRecord;
        if (typeof r.path === 'string' && typeof r.sha256 === 'string') this.records.set(r.path, r);
      } catch {
        // a line cut short by an interruption: that file is copied again
      }
    }
    // A torn last line must not swallow the next record appended after it.
    if (text && !text.endsWith('\n')) fs.appendFileSync(this.file, '\n');
  }

  get(p: string): ManifestRecord | undefined {
    return this.records.get(p);
  }

  add(record: ManifestRecord): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    fs.appendFileSync(this.file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    this.records.set(record.path, record);
  }
}

// --- planning ------------------------------------------------------------------------------------

type Step =
  | { kind: 'collection'; name: string; acl: DataAcl; existing: DataAcl | null }
  | { kind: 'folder'; rel: string; exists: boolean }
  | { kind: 'file'; rel: string; size: number; lastModified: string; skip?: ManifestRecord };

/** Both sides of one run: the clients, the roots, and where the resume state is kept. */
interface Migration {
  from: Context;
  to: Context;
  src: AlgohostClient;
  dst: AlgohostClient;
  sourceServer: string;
  destServer: string;
  owner: string;
  destAccount: string;
  collection: string | undefined;
  srcRoot: string;
  dstRoot: string;
  manifest: Manifest;
  dryRun: boolean;
}

type FileStep = Extract<Step, { kind: 'file' }>;

async function migrateData(from: Context, to: Context, sourceArg: string, opts: Options): Promise<DataMigrationReport> {
  const migration = resolveMigration(from, to, sourceArg, opts);
  const steps = await plan(migration);
  return carryOut(migration, steps);
}

/** Who is copied where; refuses copying a collection onto itself. */
function resolveMigration(from: Context, to: Context, sourceArg: string, opts: Options): Migration {
  const sourceServer = from.profile().api_server!;
  const destServer = to.profile().api_server!;
  const { owner, collection } = parseSource(sourceArg, from);
  const destOwner = opts.toOwner ?? (owner === '.my' ? '.my' : owner);
  const sameCluster = normalizeServer(sourceServer) === normalizeServer(destServer);
  const destAccount = destOwner === '.my' ? to.profile().username || '.my' : destOwner;
  if (sameCluster && destAccount.toLowerCase() === owner.toLowerCase()) {
    throw new CliError(
      `source and destination are both ${owner} on ${sourceServer}: pass --to-owner or --to <profile> (a collection cannot be copied onto itself)`,
    );
  }
  return {
    from,
    to,
    src: from.client(),
    dst: to.client(),
    sourceServer,
    destServer,
    owner,
    destAccount,
    collection,
    srcRoot: `data://${owner}`,
    dstRoot: `data://${destOwner}`,
    manifest: new Manifest(sourceServer, owner, destServer, destAccount),
    dryRun: Boolean(opts.dryRun),
  };
}

/** What there is to do: every collection, folder and file, and what the manifest says of each file. */
async function plan(m: Migration): Promise<Step[]> {
  const { src, dst, srcRoot, dstRoot } = m;
  let names: string[];
  if (m.collection) {
    const st = await src.data.stat(joinDataUri(srcRoot, m.collection));
    if (st === null) throw new CliError(`${srcRoot}/${m.collection} does not exist`);
    names = [m.collection];
  } else {
    names = [];
    for await (const e of src.data.entries(srcRoot)) if (e.type === 'folder') names.push(e.name);
    if (names.length === 0) throw new CliError(`${srcRoot} has no collections you can read`);
  }
  if ((await dst.data.stat(dstRoot)) === null) {
    throw new CliError(`the destination has no user or organization "${m.destAccount}" (${m.destServer}): create it first`);
  }
  const steps: Step[] = [];
  for (const name of names) {
    const acl = (await src.data.list(joinDataUri(srcRoot, name), { acl: true })).acl ?? { read: [] };
    const destUri = joinDataUri(dstRoot, name);
    const existing = (await dst.data.type(destUri)) === null ? null : ((await dst.data.list(destUri, { acl: true })).acl ?? { read: [] });
    steps.push({ kind: 'collection', name, acl, existing });
    await walk(src, dst, srcRoot, dstRoot, name, existing !== null, m.manifest, steps);
  }
  return steps;
}

/** Does the planned steps in order, or says what would be done, with a progress bar over the bytes to copy. */
async function carryOut(m: Migration, steps: Step[]): Promise<DataMigrationReport> {
  const suffix = m.collection ? `/${m.collection}` : '';
  const report: DataMigrationReport = {
    source: m.srcRoot + suffix,
    destination: m.dstRoot + suffix,
    source_server: m.sourceServer,
    destination_server: m.destServer,
    dry_run: m.dryRun,
    collections: [],
    files: [],
    copied: 0,
    skipped: 0,
    bytes_copied: 0,
    bytes_skipped: 0,
    manifest: m.manifest.file,
  };
  const toCopy = steps.filter((s): s is FileStep => s.kind === 'file' && !s.skip);
  const progress = new Progress(`Migrating ${plural(toCopy.length, 'file')}`);
  const copying: FileCopying = {
    progress,
    say: (text) => {
      progress.clear();
      notice(text);
    },
    count: toCopy.length,
    total: toCopy.reduce((n, f) => n + f.size, 0),
    index: 0,
    done: 0,
  };
  try {
    progress.update(0, copying.total);
    for (const step of steps) {
      if (step.kind === 'collection') report.collections.push(await migrateCollection(m, step, copying.say));
      else if (step.kind === 'folder') {
        if (!step.exists && !m.dryRun) await m.dst.data.mkdir(joinDataUri(m.dstRoot, step.rel));
      } else addFile(report, await migrateFile(m, step, copying));
    }
  } finally {
    progress.done();
  }
  return report;
}

/** Creates the collection at the destination with the source's read ACL, or sets that ACL on the one there. */
async function migrateCollection(
  m: Migration,
  step: Extract<Step, { kind: 'collection' }>,
  say: (text: string) => void,
): Promise<CollectionReport> {
  const destUri = joinDataUri(m.dstRoot, step.name);
  let action = step.existing === null ? 'created' : sameAcl(step.existing, step.acl) ? 'exists' : 'acl-updated';
  if (m.dryRun) action = action === 'exists' ? action : `would-${action === 'created' ? 'create' : 'update-acl'}`;
  else if (step.existing === null) await m.dst.data.mkdir(destUri, { acl: step.acl });
  else if (action === 'acl-updated') await m.dst.data.setAcl(destUri, step.acl);
  if (action !== 'exists') say(`${action.replace('-', ' ')}: ${destUri} (read ACL: ${aclName(step.acl)})`);
  return { source: joinDataUri(m.srcRoot, step.name), destination: destUri, acl: step.acl, action };
}

/** The progress of the file copies across one run. */
interface FileCopying {
  progress: Progress;
  say: (text: string) => void;
  /** How many files there are to copy, and their bytes. */
  count: number;
  total: number;
  /** The number of the file being copied, and the bytes copied before it. */
  index: number;
  done: number;
}

function addFile(report: DataMigrationReport, file: FileReport): void {
  report.files.push(file);
  if (file.action === 'skipped') {
    report.skipped++;
    report.bytes_skipped += file.size;
  } else {
    report.copied++;
    report.bytes_copied += file.size;
  }
}

/** Skips a file the manifest shows as copied, plans it in a dry run, or copies and verifies it and records that in the manifest. */
async function migrateFile(m: Migration, step: FileStep, copying: FileCopying): Promise<FileReport> {
  const { say, progress } = copying;
  const srcUri = joinDataUri(m.srcRoot, step.rel);
  const dstUri = joinDataUri(m.dstRoot, step.rel);
  if (step.skip) {
    say(`skipped ${step.rel} (${formatBytes(step.size)}, copied and verified before)`);
    return { source: srcUri, destination: dstUri, size: step.size, sha256: step.skip.sha256, action: 'skipped' };
  }
  const index = ++copying.index;
  if (m.dryRun) {
    say(`would copy ${step.rel} (${formatBytes(step.size)})`);
    return { source: srcUri, destination: dstUri, size: step.size, sha256: null, action: 'planned' };
  }
  // Said before the first copy, so that the user knows where the resume state is even if this run is killed.
  if (index === 1) say(`resume manifest: ${displayPath(m.manifest.file)}`);
  say(`[${index}/${copying.count}] copying ${step.rel} (${formatBytes(step.size)})`);
  progress.setLabel(`[${index}/${copying.count}] ${step.rel}`);
  const copied = await copyVerified(m.src, m.dst, srcUri, dstUri, (n) => progress.update(copying.done + n, copying.total)).catch(
    (err: unknown) => {
      if (err instanceof CliError) throw err;
      // Name the file, and the profile of the side that failed (for "is the server running?").
      const url = err instanceof AlgohostError ? err.details.url : undefined;
      const profile = url && normalizeServer(url).startsWith(normalizeServer(m.destServer)) ? m.to.profileName : m.from.profileName;
      throw new CliError(`copying ${srcUri} to ${dstUri} failed: ${describeError(err, { profile })}; run the command again to resume`);
    },
  );
  copying.done += copied.size;
  m.manifest.add({
    path: step.rel,
    size: step.size,
    last_modified: step.lastModified,
    sha256: copied.sha256,
    copied_at: new Date().toISOString(),
  });
  say(`[${index}/${copying.count}] verified ${step.rel} (sha256 ${copied.sha256.slice(0, 16)}…)`);
  return { source: srcUri, destination: dstUri, size: copied.size, sha256: copied.sha256, action: 'copied' };
}

/**
 * Adds the folders and files under `rel` (a collection or a folder in it), depth first, each
 * folder before what it holds. `destExists`: the destination folder is there already, so its
 * listing says which copies the manifest may trust.
 */
async function walk(
  src: AlgohostClient,
  dst: AlgohostClient,
  srcRoot: string,
  dstRoot: string,
  rel: string,
  destExists: boolean,
  manifest: Manifest,
  steps: Step[],
): Promise<void> {
  const there = new Map<string, { type: 'folder' } | { type: 'file'; size: number }>();
  if (destExists) {
    for await (const e of dst.data.entries(joinDataUri(dstRoot, rel))) {
      there.set(e.type === 'folder' ? e.name : e.filename, e.type === 'folder' ? { type: 'folder' } : { type: 'file', size: e.size });
    }
  }
  const folders: string[] = [];
  for await (const e of src.data.entries(joinDataUri(srcRoot, rel))) {
    if (e.type === 'folder') {
      folders.push(e.name);
      continue;
    }
    const fileRel = `${rel}/${e.filename}`;
    const record = manifest.get(fileRel);
    const copy = there.get(e.filename);
    const unchanged =
      record !== undefined &&
      record.size === e.size &&
      record.last_modified === e.last_modified &&
      copy?.type === 'file' &&
      copy.size === e.size;
    steps.push({ kind: 'file', rel: fileRel, size: e.size, lastModified: e.last_modified, skip: unchanged ? record : undefined });
  }
  for (const name of folders) {
    const folderRel = `${rel}/${name}`;
    const exists = there.get(name)?.type === 'folder';
    steps.push({ kind: 'folder', rel: folderRel, exists });
    await walk(src, dst, srcRoot, dstRoot, folderRel, exists, manifest, steps);
  }
}

/**
 * Streams one file from `from` to `to`, hashing what it reads, then reads the copy back and
 * hashes that: the copy is good only when both hashes and sizes agree.
 */
async function copyVerified(
  src: AlgohostClient,
  dst: AlgohostClient,
  from: string,
  to: string,
  onBytes: (sent: number) => void,
): Promise<{ size: number; sha256: string }> {
  const res = await src.data.stream(from);
  const length = res.headers.get('content-length');
  const size = length !== null && /^\d+$/.test(length) ? Number(length) : undefined;
  const sourceHash = crypto.createHash('sha256');
  let sent = 0;
  const body = (res.body ?? new Blob([]).stream()).pipeThrough(
    meter((chunk) => {
      sourceHash.update(chunk);
      sent += chunk.byteLength;
      onBytes(sent);
    }),
  );
  await dst.data.put(to, body, { size });
  const expected = sourceHash.digest('hex');

  const back = await dst.data.stream(to);
  const destHash = crypto.createHash('sha256');
  let received = 0;
  await drain(back.body ?? new Blob([]).stream(), (chunk) => {
    destHash.update(chunk);
    received += chunk.byteLength;
  });
  const actual = destHash.digest('hex');
  if (actual !== expected || received !== sent) {
    throw new CliError(
      `${to} does not match ${from} after copying (source: ${sent} bytes, SHA-256 ${expected}; destination: ${received} bytes, SHA-256 ${actual}); run the command again to copy it again`,
    );
  }
  return { size: sent, sha256: expected };
}
