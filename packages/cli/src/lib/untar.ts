/**
 * Unpacks a (gzipped) tar archive into a directory with node-tar: regular files and
 * directories (ustar prefixes, pax paths and GNU long names included), modes kept. Links,
 * devices and FIFOs are not part of templates and are skipped. The archive is read twice: first
 * every path is checked, and one that is absolute or climbs out with `..` refuses the whole
 * archive before anything is written, so it can never write outside its directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Parser, type ReadEntry, UnpackSync } from 'tar';
import { CliError } from '../errors.js';

export interface UnpackedEntry {
  path: string;
  type: 'file' | 'directory';
  size: number;
}

const KINDS: Partial<Record<ReadEntry['type'], UnpackedEntry['type']>> = {
  File: 'file',
  OldFile: 'file',
  ContiguousFile: 'file',
  Directory: 'directory',
};

export function unpackTarGz(archive: Uint8Array, dir: string): UnpackedEntry[] {
  const buf = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  const entries = listEntries(buf);
  const root = path.resolve(dir);
  fs.mkdirSync(root, { recursive: true });
  const failures: string[] = [];
  const unpack = new UnpackSync({
    cwd: root,
    strict: true,
    // Files belong to whoever runs the CLI (root too), with the archive's permission bits.
    preserveOwner: false,
    filter: (p, entry) => 'type' in entry && KINDS[entry.type] !== undefined && !isRoot(p),
    onwarn: (_code, message) => failures.push(String(message)),
  });
  unpack.on('error', (err: Error) => failures.push(err.message));
  unpack.end(buf);
  if (failures.length) throw new CliError(`the archive could not be unpacked: ${failures[0]}`);
  return entries;
}

/** Every entry to unpack, in order; throws on a path that would leave the directory. */
function listEntries(buf: Buffer): UnpackedEntry[] {
  const entries: UnpackedEntry[] = [];
  let failure: string | undefined;
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry) => {
      entry.resume();
      const type = KINDS[entry.type];
      if (!type || failure) return;
      if (escapes(entry.path)) {
        failure = `refusing to unpack "${entry.path}": it points outside the target directory`;
        return;
      }
      if (isRoot(entry.path)) return;
      entries.push({ path: entry.path.replace(/^(\.\/+)+/, '').replace(/\/+$/, ''), type, size: type === 'file' ? entry.size : 0 });
    },
    onwarn: (_code, message) => (failure ??= damaged(String(message))),
  });
  parser.on('error', (err: Error) => (failure ??= damaged(err.message)));
  parser.end(buf);
  if (failure) throw new CliError(failure);
  return entries;
}

const escapes = (p: string) => path.isAbsolute(p) || /^[a-zA-Z]:/.test(p) || p.split(/[\\/]/).includes('..');
const isRoot = (p: string) => p.replace(/^(\.\/+)+/, '').replace(/\/+$/, '') === '' || p === '.';

const damaged = (message: string) =>
  message.startsWith('zlib: ')
    ? `the archive is not valid gzip: ${message.slice(6)}`
    : `the archive is damaged: ${message.replace(/^TAR_\w+: /, '')}`;
