/**
 * How work travels in NATS messages: a small JSON part (what to do) and a binary part (a call's
 * input, up to 10 MiB, carried as its bytes: never base64, never parsed on the way). One message
 * is `[4-byte big-endian length of the JSON][JSON][bytes]`.
 */
export function encodeFrame(meta: unknown, bytes?: Uint8Array): Uint8Array {
  const json = JSON.stringify(meta);
  const n = Buffer.byteLength(json);
  const out = Buffer.allocUnsafe(4 + n + (bytes?.length ?? 0));
  out.writeUInt32BE(n, 0);
  out.write(json, 4);
  if (bytes) out.set(bytes, 4 + n);
  return out;
}

export function decodeFrame<T>(data: Uint8Array): { meta: T; bytes: Buffer } {
  const { json, bytes } = splitFrame(data);
  return { meta: JSON.parse(json) as T, bytes };
}

/** A message's JSON part as text, not yet parsed, and its bytes. */
export function splitFrame(data: Uint8Array): { json: string; bytes: Buffer } {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length < 4) throw new Error('a work message shorter than its header');
  const n = buf.readUInt32BE(0);
  if (4 + n > buf.length) throw new Error('a work message whose JSON part runs past its end');
  return { json: buf.toString('utf8', 4, 4 + n), bytes: buf.subarray(4 + n) };
}
