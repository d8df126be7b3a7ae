/**
 * A minimal ustar writer for small in-memory file sets (templates). Regular files only;
 * paths up to 255 bytes via the ustar prefix field.
 */
import zlib from 'node:zlib';

export interface TarEntry {
  path: string;
  content: Buffer;
  mode: number;
}

const BLOCK = 512;

export function tarGzip(entries: readonly TarEntry[], mtimeSeconds: number): Buffer {
  const chunks: Buffer[] = [];
  for (const e of entries) {
    chunks.push(header(e, mtimeSeconds));
    chunks.push(e.content);
    const pad = (BLOCK - (e.content.length % BLOCK)) % BLOCK;
    if (pad) chunks.push(Buffer.alloc(pad));
  }
  chunks.push(Buffer.alloc(BLOCK * 2));
  // eslint-disable-next-line no-restricted-syntax -- CPU only, no I/O: a template of a few KiB, made once per environment and cached by the catalog
  return zlib.gzipSync(Buffer.concat(chunks));
}

function header(e: TarEntry, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  const [prefix, name] = splitPath(e.path);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, e.mode & 0o7777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, e.content.length);
  octal(h, 136, 12, mtime);
  h.fill(' ', 148, 156); // checksum is computed with its own field as spaces
  h.write('0', 156, 1, 'latin1');
  h.write('ustar\u000000', 257, 8, 'latin1');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\u0000 ', 148, 8, 'latin1');
  return h;
}

/** ustar keeps up to 155 bytes of directories apart from a name of up to 100: try each '/'. */
function splitPath(p: string): [string, string] {
  if (Buffer.byteLength(p) <= 100) return ['', p];
  for (let cut = p.indexOf('/'); cut > 0; cut = p.indexOf('/', cut + 1)) {
    const prefix = p.slice(0, cut);
    const name = p.slice(cut + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return [prefix, name];
  }
  throw new Error(`path too long for a tar archive: ${p}`);
}

function octal(buf: Buffer, offset: number, length: number, value: number): void {
  buf.write(value.toString(8).padStart(length - 1, '0') + '\u0000', offset, length, 'latin1');
}
