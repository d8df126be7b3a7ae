/**
 * `algo run <owner>/<name>[/<version>]`: calls an algorithm (docs/compatibility.md §2) with the input flags of
 * the original CLI and prints the result: JSON as JSON, text as is, binary as raw bytes.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import { decodeBase64, utf8OrUndefined } from '@algohost/client';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { notice, out } from '../lib/output.js';
import { Progress } from '../lib/progress.js';
import { contextOf, needsFeature, optionsOf, parseAlgorithm, positiveInt, withProfile } from './common.js';

interface RunOptions {
  data?: string;
  dataFile?: string;
  text?: string;
  textFile?: string;
  json?: string;
  jsonFile?: string;
  binary?: string;
  binaryFile?: string;
  timeout?: number;
  debug?: boolean;
  output?: string;
  responseBody?: boolean;
  response?: boolean;
  meta?: boolean;
  silence?: boolean;
  async?: boolean;
}

interface Input {
  body: string | Uint8Array;
  contentType: string;
}

export function register(program: Command): void {
  withProfile(
    program
      .command('run')
      .argument('<algorithm>', 'owner/name or owner/name/version (1.2.3, 1.2.*, latest, latestPrivate, a commit SHA)')
      .description('call an algorithm and print its result; input files may be "-" for stdin')
      .option('-d, --data <data>', 'input, auto-detected: JSON if it parses, else text')
      .option('-D, --data-file <file>', 'input from a file, auto-detected: JSON, else text, else binary')
      .option('-t, --text <data>', 'input as text (text/plain)')
      .option('-T, --text-file <file>', 'input as text, from a file')
      .option('-j, --json <data>', 'input as JSON (application/json)')
      .option('-J, --json-file <file>', 'input as JSON, from a file')
      .option('-b, --binary <data>', 'input as binary (application/octet-stream)')
      .option('-B, --binary-file <file>', 'input as binary, from a file')
      .option('--timeout <seconds>', 'call timeout in seconds (server default 300, at most 3000)', positiveInt)
      .option('--debug', "print the algorithm's stdout (owner and organization members only)")
      .option('-o, --output <file>', 'write the result to a file instead of stdout')
      .option('--response-body', 'print the HTTP response body instead of the result')
      .option('--response', 'print the whole HTTP response (status, headers, body) instead of the result')
      .option('-m, --meta', 'print the duration on stderr')
      .option('-s, --silence', 'print nothing but the result')
      .option('--async', 'start the call without waiting (output=void) and print its request id'),
  ).action(async (algorithm: string, _o, cmd: Command) => run(contextOf(cmd), algorithm, optionsOf<RunOptions>(cmd)));
}

async function run(ctx: Context, arg: string, opts: RunOptions): Promise<void> {
  const ref = parseAlgorithm(arg);
  const input = await readInput(opts);
  const client = ctx.client();
  const path = `/v1/algo/${encodeURIComponent(ref.owner)}/${encodeURIComponent(ref.name)}${ref.version ? `/${encodeURIComponent(ref.version)}` : ''}`;
  const progress = new Progress(`Running ${ref.owner}/${ref.name}${ref.version ? `/${ref.version}` : ''}`, 'seconds');
  let res: Response;
  let text: string;
  try {
    res = await needsFeature('calling algorithms', () =>
      client.transport.send('POST', path, {
        query: { timeout: opts.timeout, stdout: opts.debug ? 'true' : undefined, output: opts.async ? 'void' : undefined },
        body: input.body as BodyInit,
        contentType: input.contentType,
      }),
    );
    text = await res.text();
  } finally {
    progress.done();
  }

  if (opts.response) {
    const head = [`HTTP ${res.status} ${res.statusText}`, ...[...res.headers].map(([k, v]) => `${k}: ${v}`)].join('\n');
    return emit(opts.output, `${head}\n\n${text}`);
  }
  if (opts.responseBody) return emit(opts.output, text);

  let body: {
    result?: unknown;
    metadata?: { content_type?: string; duration?: number; stdout?: string };
    error?: { message?: string; error_type?: string; stacktrace?: string; stack_trace?: string };
    request_id?: string;
    async?: boolean;
  };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new CliError(`the server answered with a body that is not JSON (HTTP ${res.status})`);
  }
  if (opts.async) {
    if (!body.request_id) throw new CliError('the server did not return a request id for the asynchronous call');
    return emit(undefined, body.request_id);
  }
  if (opts.debug && body.metadata?.stdout) out(body.metadata.stdout.endsWith('\n') ? body.metadata.stdout : `${body.metadata.stdout}\n`);
  if (body.error) {
    const trace = body.error.stacktrace ?? body.error.stack_trace;
    if (opts.debug && trace) process.stderr.write(trace.endsWith('\n') ? trace : `${trace}\n`);
    throw new CliError(`${body.error.error_type ?? 'AlgorithmError'}: ${body.error.message ?? 'the algorithm failed'}`);
  }
  const meta = body.metadata ?? {};
  if (opts.meta && !opts.silence && typeof meta.duration === 'number') notice(`Completed in ${meta.duration.toFixed(3)} seconds`);
  switch (meta.content_type) {
    case 'binary':
      return emit(opts.output, decodeBase64(String(body.result ?? '')));
    case 'text':
      return emit(opts.output, String(body.result ?? ''));
    case 'void':
      return;
    default:
      return emit(opts.output, JSON.stringify(body.result ?? null));
  }
}

/** Writes a result: to the file of -o as is, or to stdout (text ends with a newline). */
function emit(file: string | undefined, value: string | Uint8Array): void {
  if (file) {
    fs.writeFileSync(file, value);
    return;
  }
  if (typeof value === 'string') out(value.endsWith('\n') ? value : `${value}\n`);
  else process.stdout.write(value);
}

async function readInput(opts: RunOptions): Promise<Input> {
  const given = (['data', 'dataFile', 'text', 'textFile', 'json', 'jsonFile', 'binary', 'binaryFile'] as const).filter(
    (k) => opts[k] !== undefined,
  );
  if (given.length === 0)
    throw new CliError('no input: give it with -d, -t, -j or -b, or from a file with -D, -T, -J or -B ("-" is stdin)');
  if (given.length > 1) throw new CliError('give one input only (one of -d, -D, -t, -T, -j, -J, -b, -B)');
  if (opts.data !== undefined) return autoDetect(Buffer.from(opts.data, 'utf8'));
  if (opts.dataFile !== undefined) return autoDetect(await readFileOrStdin(opts.dataFile));
  if (opts.text !== undefined) return { body: opts.text, contentType: 'text/plain' };
  if (opts.textFile !== undefined) return { body: (await readFileOrStdin(opts.textFile)).toString('utf8'), contentType: 'text/plain' };
  if (opts.json !== undefined) return { body: checkJson(opts.json, '-j'), contentType: 'application/json' };
  if (opts.jsonFile !== undefined)
    return { body: checkJson((await readFileOrStdin(opts.jsonFile)).toString('utf8'), '-J'), contentType: 'application/json' };
  if (opts.binary !== undefined) return { body: new Uint8Array(Buffer.from(opts.binary, 'utf8')), contentType: 'application/octet-stream' };
  return { body: new Uint8Array(await readFileOrStdin(opts.binaryFile!)), contentType: 'application/octet-stream' };
}

/** -d/-D: JSON if it parses, else text if it is UTF-8, else binary. */
function autoDetect(bytes: Buffer): Input {
  const text = utf8OrUndefined(bytes);
  if (text === undefined) return { body: new Uint8Array(bytes), contentType: 'application/octet-stream' };
  try {
    JSON.parse(text);
    return { body: text, contentType: 'application/json' };
  } catch {
    return { body: text, contentType: 'text/plain' };
  }
}

function checkJson(text: string, flag: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    throw new CliError(`${flag}: the input is not valid JSON: ${(err as Error).message}`);
  }
  return text;
}

async function readFileOrStdin(file: string): Promise<Buffer> {
  if (file !== '-') return fs.promises.readFile(file);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
