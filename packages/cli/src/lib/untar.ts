/**
 * Unpacks a (gzipped) tar archive into a directory: regular files and directories, ustar
 * prefixes, pax `path` records and GNU long names. Links and devices are skipped. An entry
 * whose path is absolute or climbs out with `..` is refused, so an archive can never write
 * outside the directory it is unpacked into.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { CliError } from '../errors.js';

const BLOCK = 512;

export interface UnpackedEntry {
  path: string;
  type: 'file' | 'directory';
  size: number;
}

export function unpackTarGz(archive: Uint8Array, dir: string): UnpackedEntry[] {
  let tar: Buffer;
  const buf = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
  try {
    tar = buf[0] === 0x1f && buf[1] === 0x8b ? zlib.gunzipSync(buf) : buf;
  } catch (err) {
    throw new CliError(`the archive is not valid gzip: ${(err as Error).message}`);
  }
  return unpackTar(tar, dir);
}

export function unpackTar(tar: Buffer, dir: string): UnpackedEntry[] {
  const root = path.resolve(dir);
  fs.mkdirSync(root, { recursive: true });
  const entries: UnpackedEntry[] = [];
  let offset = 0;
  let longName: string | undefined;
  let paxPath: string | undefined;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break;
    checkChecksum(header, offset);
    const size = parseOctal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] ?? 0);
    const body = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    if (body.length < size) throw new CliError('the archive is truncated');
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;

    if (type === 'L') {
      longName = cString(body);
      continue;
    }
    if (type === 'x') {
      paxPath = parsePax(body).path ?? paxPath;
      continue;
    }
    if (type === 'g') continue;

    const name = cString(header.subarray(0, 100));
    const prefix = header.subarray(257, 263).toString('latin1').startsWith('ustar') ? cString(header.subarray(345, 500)) : '';
    const entryPath = paxPath ?? longName ?? (prefix ? `${prefix}/${name}` : name);
    paxPath = undefined;
    longName = undefined;

    const target = safeTarget(root, entryPath);
    if (target === root) continue;
    const mode = parseOctal(header.subarray(100, 108));
    if (type === '5') {
      fs.mkdirSync(target, { recursive: true });
      entries.push({ path: entryPath.replace(/\/+$/, ''), type: 'directory', size: 0 });
    } else if (type === '0' || type === '\0' || type === '7') {
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, body, { mode: (mode & 0o777) | 0o600 });
      fs.chmodSync(target, (mode & 0o777) | 0o600);
      entries.push({ path: entryPath, type: 'file', size });
    }
    // Links, devices and FIFOs are not part of templates: skipped.
  }
  return entries;
}

function safeTarget(root: string, entryPath: string): string {
  const clean = entryPath.replace(/^\.\/+/, '');
  if (path.isAbsolute(clean) || clean.split(/[\\/]/).includes('..')) {
    throw new CliError(`refusing to unpack "${entryPath}": it points outside the target directory`);
  }
  const target = path.resolve(root, clean);
  if (target !== root && !target.startsWith(root + path.sep)) {
    throw new CliError(`refusing to unpack "${entryPath}": it points outside the target directory`);
  }
  return target;
}

function cString(buf: Buffer): string {
  const nul = buf.indexOf(0);
  return buf.subarray(0, nul < 0 ? buf.length : nul).toString('utf8');
}

function parseOctal(buf: Buffer): number {
  // Base-256 (GNU) for big numbers: high bit of the first byte set.
  if ((buf[0] ?? 0) & 0x80) {
    let n = 0;
    for (let i = 1; i < buf.length; i++) n = n * 256 + (buf[i] ?? 0);
    return n;
  }
  const text = cString(buf).trim();
  return text ? parseInt(text, 8) : 0;
}

function checkChecksum(header: Buffer, offset: number): void {
  const stored = parseOctal(header.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  if (sum !== stored) throw new CliError(`the archive is damaged (bad header checksum at byte ${offset})`);
}

/** pax records: "<length> <key>=<value>\n". */
function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < body.length) {
    const space = body.indexOf(0x20, i);
    if (space < 0) break;
    const len = parseInt(body.subarray(i, space).toString('latin1'), 10);
    if (!Number.isFinite(len) || len <= 0) break;
    const record = body.subarray(space + 1, i + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    i += len;
  }
  return out;
}
