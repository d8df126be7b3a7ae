/**
 * Questions on a terminal (stdin a TTY); prompts go to stderr so stdout stays for results.
 * Lines are read through one queue, so answers typed (or pasted) ahead are not lost.
 */
import readline from 'node:readline';
import { CliError } from '../errors.js';

export function interactive(): boolean {
  return Boolean(process.stdin.isTTY);
}

let reader: readline.Interface | undefined;
const lines: string[] = [];
const waiting: ((line: string | undefined) => void)[] = [];
let ended = false;

function nextLine(): Promise<string | undefined> {
  if (!reader) {
    // terminal: false leaves echo and line editing to the terminal itself.
    reader = readline.createInterface({ input: process.stdin, terminal: false });
    reader.on('line', (l) => (waiting.length ? waiting.shift()!(l) : lines.push(l)));
    reader.on('close', () => {
      ended = true;
      for (const w of waiting.splice(0)) w(undefined);
    });
  }
  if (lines.length) return Promise.resolve(lines.shift());
  if (ended) return Promise.resolve(undefined);
  return new Promise((resolve) => waiting.push(resolve));
}

/** Stops reading stdin (so the process can exit). */
export function closePrompts(): void {
  reader?.close();
  reader = undefined;
}

export async function ask(question: string, defaultValue?: string): Promise<string> {
  process.stderr.write(`${question}${defaultValue ? ` [${defaultValue}]` : ''}: `);
  const answer = await nextLine();
  if (answer === undefined) throw new CliError(`no answer to "${question}" (end of input)`);
  return answer.trim() || defaultValue || '';
}

export interface Choice<T> {
  label: string;
  value: T;
  /** Typing this also picks the choice (besides its number). */
  name?: string;
}

/** A numbered list; the answer is a number or a choice's name. A single choice is taken without asking. */
export async function choose<T>(question: string, choices: Choice<T>[], defaultIndex = 0): Promise<T> {
  if (choices.length === 0) throw new CliError(`nothing to choose from for: ${question}`);
  if (choices.length === 1) return choices[0]!.value;
  process.stderr.write(`${question}\n`);
  choices.forEach((c, i) => process.stderr.write(`  ${String(i + 1).padStart(2)}) ${c.label}\n`));
  for (;;) {
    const answer = await ask('Choose', String(defaultIndex + 1));
    const n = Number(answer);
    if (Number.isInteger(n) && n >= 1 && n <= choices.length) return choices[n - 1]!.value;
    const named = choices.find((c) => c.name !== undefined && c.name.toLowerCase() === answer.toLowerCase());
    if (named) return named.value;
    process.stderr.write(`Answer a number from 1 to ${choices.length}.\n`);
  }
}
