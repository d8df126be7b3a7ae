/**
 * Moving file contents without holding them: local files are read and written as streams,
 * hosted files go up and come down as streams (`client.data.put` with a ReadableStream,
 * `client.data.stream`), and a meter sees every chunk on the way (for progress and checksums).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A pass-through stream that shows each chunk to `see` (a byte counter, a hash). */
export function meter(see: (chunk: Uint8Array) => void): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      see(chunk);
      controller.enqueue(chunk);
    },
  });
}

/** A local file as a web stream (what fetch sends). */
export function readLocal(file: string): ReadableStream<Uint8Array> {
  return Readable.toWeb(fs.createReadStream(file)) as ReadableStream<Uint8Array>;
}

/**
 * Writes a stream to `file` through a temporary file next to it and a rename, so that an
 * interrupted download never leaves a truncated file under the real name.
 */
export async function writeLocal(body: ReadableStream<Uint8Array>, file: string): Promise<void> {
  const target = path.resolve(file);
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.algo-${crypto.randomBytes(4).toString('hex')}.part`);
  try {
    await pipeline(
      Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>),
      fs.createWriteStream(tmp, { flags: 'wx' }),
    );
    await fs.promises.rename(tmp, target);
  } catch (err) {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
}

/** Reads a stream to its end, showing every chunk to `see`; keeps nothing. */
export async function drain(body: ReadableStream<Uint8Array>, see: (chunk: Uint8Array) => void): Promise<void> {
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    see(value);
  }
}
