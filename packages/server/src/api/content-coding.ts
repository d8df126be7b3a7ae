/**
 * Which content coding an answer may take, read from the request's Accept-Encoding (RFC 9110
 * §12.5.3), for the two places that compress: the web UI's precompressed files
 * (api/web-app.ts) and large JSON answers (api/compression.ts).
 *
 * Only brotli and gzip are offered, brotli first when the client weighs them equally (it is
 * smaller for the same text). A coding the header names with q=0 is refused even when `*`
 * would allow it; a header that is absent or names neither (nor `*`) gets the bytes as they
 * are. `identity;q=0` is not honoured with a 406: an uncompressed answer is what every client
 * can read, and what the web UI serves when a file has no compressed copy.
 */
import type { FastifyReply } from 'fastify';

export type Coding = 'br' | 'gzip';

/** Best first when the client gives them the same weight. */
const OFFERED: readonly Coding[] = ['br', 'gzip'];

/** The codings the client accepts, its preferred first; empty: send the bytes uncoded. */
export function acceptedCodings(header: string | string[] | undefined): Coding[] {
  if (header === undefined) return [];
  const weights = new Map<string, number>();
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name = '', ...params] = part.split(';');
    const token = name.trim().toLowerCase();
    if (token === '') continue;
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    // A weight that is not a number in [0, 1] is read as "not acceptable": refusing a coding the
    // client may not want costs bytes, sending one it cannot decode costs the answer.
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(token, Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0);
  }
  const any = weights.get('*') ?? 0;
  return OFFERED.map((coding, rank) => ({ coding, rank, weight: weights.get(coding) ?? any }))
    .filter((c) => c.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.rank - b.rank)
    .map((c) => c.coding);
}

/**
 * Adds Accept-Encoding to the answer's Vary (kept once, other names kept): an answer whose coding
 * followed the header must say so, even when it went out uncoded, or a shared cache could hand
 * the uncoded copy to a browser that asked for brotli, or the brotli one to a client without it.
 */
export function varyOnAcceptEncoding(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  const names = current === undefined ? '' : Array.isArray(current) ? current.join(', ') : String(current);
  const listed = names.split(',').map((n) => n.trim().toLowerCase());
  if (listed.includes('accept-encoding') || listed.includes('*')) return;
  reply.header('vary', names.trim() === '' ? 'Accept-Encoding' : `${names}, Accept-Encoding`);
}
