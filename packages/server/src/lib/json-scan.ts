/**
 * One linear pass over JSON text, building nothing: checks the grammar (RFC 8259) and how
 * deeply arrays and objects nest, with memory bounded by the depth limit. Deep nesting is
 * refused here, before any parser or serializer recurses into it (V8's JSON.stringify and most
 * harnesses' parsers overflow their stacks on 100,000 levels).
 */

export type JsonScan =
  { ok: true } | { ok: false; reason: 'depth'; at: number; message: string } | { ok: false; reason: 'syntax'; at: number; message: string };

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;

const enum Expect {
  Value,
  ValueOrClose, // just after [
  KeyOrClose, // just after {
  Key, // after , in an object
  Colon,
  After, // after a value: , or a closing bracket (or the end at depth 0)
}

const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

// Module-level, not closures made per scan: scanJson runs on every call input.
function syntax(at: number, what: string): JsonScan {
  return { ok: false, reason: 'syntax', at, message: `${what} at byte ${at}` };
}

function unexpected(bytes: Uint8Array, at: number): JsonScan {
  return syntax(at, at >= bytes.length ? 'unexpected end of input' : `unexpected ${describeByte(bytes[at]!)}`);
}

/**
 * Whether each open level is an object (1) or an array (0), shared by every scan: a scan runs
 * to its end without yielding, and writes a level before it reads it. A typed array of more
 * than 64 bytes gets a backing store outside the heap, which V8 tracks and frees in a pass of
 * its minor collections; every call's input used to make one (docs/performance.md, rule 6).
 */
let levels = new Uint8Array(128);

/** Checks `bytes` as one JSON text whose arrays and objects nest at most `maxDepth` levels. */
export function scanJson(bytes: Uint8Array, maxDepth: number): JsonScan {
  const n = bytes.length;
  if (levels.length < maxDepth) levels = new Uint8Array(maxDepth);
  // 1 = object, per level; only the first maxDepth are used.
  const objects = levels;
  let depth = 0;
  let expect: Expect = Expect.Value;
  let i = 0;

  while (true) {
    while (i < n && isWhitespace(bytes[i]!)) i++;
    if (i >= n) break;
    const c = bytes[i]!;
    switch (expect) {
      case Expect.ValueOrClose:
      case Expect.Value: {
        if (expect === Expect.ValueOrClose && c === CLOSE_ARRAY) {
          depth--;
          i++;
          expect = Expect.After;
          break;
        }
        if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
          if (depth >= maxDepth) {
            return {
              ok: false,
              reason: 'depth',
              at: i,
              message: `arrays and objects nest deeper than the limit of ${maxDepth} levels (at byte ${i})`,
            };
          }
          objects[depth++] = c === OPEN_OBJECT ? 1 : 0;
          i++;
          expect = c === OPEN_OBJECT ? Expect.KeyOrClose : Expect.ValueOrClose;
          break;
        }
        const end = c === QUOTE ? skipString(bytes, i) : c === MINUS || isDigit(c) ? skipNumber(bytes, i) : skipLiteral(bytes, i);
        if (end < 0) return syntax(-end - 1, c === QUOTE ? 'unterminated or malformed string starting' : `malformed value`);
        i = end;
        expect = Expect.After;
        break;
      }
      case Expect.KeyOrClose:
      case Expect.Key: {
        if (expect === Expect.KeyOrClose && c === CLOSE_OBJECT) {
          depth--;
          i++;
          expect = Expect.After;
          break;
        }
        if (c !== QUOTE) return unexpected(bytes, i);
        const end = skipString(bytes, i);
        if (end < 0) return syntax(-end - 1, 'unterminated or malformed string starting');
        i = end;
        expect = Expect.Colon;
        break;
      }
      case Expect.Colon:
        if (c !== COLON) return unexpected(bytes, i);
        i++;
        expect = Expect.Value;
        break;
      case Expect.After: {
        if (depth === 0) return unexpected(bytes, i);
        const inObject = objects[depth - 1] === 1;
        if (c === COMMA) {
          i++;
          expect = inObject ? Expect.Key : Expect.Value;
        } else if (c === (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          depth--;
          i++;
        } else {
          return unexpected(bytes, i);
        }
        break;
      }
    }
  }
  if (expect !== Expect.After || depth !== 0) return unexpected(bytes, n);
  return { ok: true };
}

/**
 * Only the nesting, for callers that parse afterwards and report syntax errors their own way:
 * true when arrays and objects nest deeper than `maxDepth` (brackets inside strings do not count).
 */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      for (i++; i < n && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The same check over text already decoded (a runner's response line), without copying it. */
export function textNestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < n && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The index after the string starting at `i` (a quote), or -(position of the fault)-1. */
function skipString(bytes: Uint8Array, i: number): number {
  const n = bytes.length;
  const start = i;
  for (i++; i < n; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -i - 1; // control characters must be escaped
    if (c === BACKSLASH) {
      const e = bytes[++i];
      if (e === 0x75) {
        // \uXXXX
        for (let k = 1; k <= 4; k++) if (i + k >= n || !isHex(bytes[i + k]!)) return -i - 1;
        i += 4;
      } else if (
        e !== QUOTE &&
        e !== BACKSLASH &&
        e !== 0x2f && // /
        e !== 0x62 && // b
        e !== 0x66 && // f
        e !== 0x6e && // n
        e !== 0x72 && // r
        e !== 0x74 // t
      ) {
        return -i - 1;
      }
    }
  }
  return -start - 1;
}

/** -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
function skipNumber(bytes: Uint8Array, i: number): number {
  const start = i;
  if (bytes[i] === MINUS) i++;
  if (bytes[i] === 0x30) i++;
  else if (isDigit(bytes[i] ?? 0) && bytes[i] !== 0x30) while (isDigit(bytes[i] ?? 0)) i++;
  else return -start - 1;
  if (bytes[i] === 0x2e) {
    i++;
    if (!isDigit(bytes[i] ?? 0)) return -start - 1;
    while (isDigit(bytes[i] ?? 0)) i++;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i++;
    if (bytes[i] === 0x2b || bytes[i] === MINUS) i++;
    if (!isDigit(bytes[i] ?? 0)) return -start - 1;
    while (isDigit(bytes[i] ?? 0)) i++;
  }
  return i;
}

const LITERALS = ['true', 'false', 'null'].map((w) => Buffer.from(w));

function skipLiteral(bytes: Uint8Array, i: number): number {
  for (const word of LITERALS) {
    if (bytes[i] !== word[0]) continue;
    for (let k = 1; k < word.length; k++) if (bytes[i + k] !== word[k]) return -i - 1;
    return i + word.length;
  }
  return -i - 1;
}

function describeByte(c: number): string {
  return c >= 0x21 && c <= 0x7e ? `"${String.fromCharCode(c)}"` : `byte 0x${c.toString(16).padStart(2, '0')}`;
}
