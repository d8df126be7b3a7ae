/**
 * The Overview's "How to call it" examples. The sample input is the publisher's text and a
 * visitor copies the example into a shell or a program, so the input is never code: it is a
 * string literal of each language (handed to its JSON parser when it is JSON), and every other
 * value put into an example is quoted the same way. Escapes are those every interpreter of the
 * language reads alike: the shell's single quotes (POSIX sh, bash, zsh), Python's and
 * JavaScript's single-quoted string literals with everything outside printable ASCII escaped.
 */
import { KEY_PLACEHOLDER } from './git-help.js';

export const SNIPPET_LANGUAGES = ['curl', 'CLI', 'Python', 'JavaScript'] as const;
export type SnippetLanguage = (typeof SNIPPET_LANGUAGES)[number];

/** What an example sends when the version has no sample input. */
const DEFAULT_INPUT = '"world"';

export function callSnippets(server: string, algorithm: string, sample: string | undefined): Record<SnippetLanguage, string> {
  const input = sample && sample.trim() ? sample.trim() : DEFAULT_INPUT;
  // Sent as JSON when it is JSON (as the sample was published), else as text.
  const json = isJson(input);
  const url = `${server}/v1/algo/${algorithm}`;
  const py = json ? `json.loads(${pythonString(input)})` : pythonString(input);
  const js = json ? `JSON.parse(${javascriptString(input)})` : javascriptString(input);
  return {
    // --data-raw, not -d: curl reads a file for -d @name (a sample "@~/.ssh/id_rsa" would
    // upload the visitor's key to the algorithm).
    curl: [
      `curl -X POST ${shellQuote(url)}`,
      `  -H ${shellQuote(`Authorization: Simple ${KEY_PLACEHOLDER}`)}`,
      `  -H ${shellQuote(`Content-Type: ${json ? 'application/json' : 'text/plain'}`)}`,
      `  --data-raw ${shellQuote(input)}`,
    ].join(' \\\n'),
    CLI: `algo auth --server ${shellQuote(server)} --key ${KEY_PLACEHOLDER}\nalgo run ${shellQuote(algorithm)} ${json ? '-j' : '-t'} ${shellQuote(input)}`,
    Python: [
      ...(json ? ['import json'] : []),
      'import Algorithmia',
      '',
      `client = Algorithmia.client(${pythonString(KEY_PLACEHOLDER)}, ${pythonString(server)})`,
      `print(client.algo(${pythonString(algorithm)}).pipe(${py}).result)`,
    ].join('\n'),
    JavaScript: [
      "const Algorithmia = require('algorithmia');",
      '',
      `Algorithmia.client(${javascriptString(KEY_PLACEHOLDER)}, ${javascriptString(server)})`,
      `  .algo(${javascriptString(algorithm)})`,
      `  .pipe(${js})`,
      '  .then((response) => console.log(response.get()));',
    ].join('\n'),
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * One word of a POSIX shell: single-quoted (nothing is special inside but the closing quote),
 * each `'` written as `'\''`. A word of only safe characters stays bare, for readability.
 */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(s) && !s.startsWith('-')) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A Python 3 str literal in single quotes: printable ASCII as is, every other code point escaped. */
export function pythonString(s: string): string {
  return quoted(s, (c) => `\\U${hex(c, 8)}`);
}

/**
 * A JavaScript string literal in single quotes, escaped as Python's: no line terminator (U+2028
 * and U+2029 included), no lone surrogate and no other character outside printable ASCII is left raw.
 */
export function javascriptString(s: string): string {
  return quoted(s, (c) => `\\u{${c.toString(16)}}`);
}

/** `'…'` with only the escapes Python and JavaScript read alike (`astral` writes a code point past U+FFFF). */
function quoted(s: string, astral: (codePoint: number) => string): string {
  let out = "'";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "'" || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (c <= 0xff) out += `\\x${hex(c, 2)}`;
    else if (c <= 0xffff) out += `\\u${hex(c, 4)}`;
    else out += astral(c);
  }
  return `${out}'`;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
