/**
 * The JavaScript (Node 20) runner harness: the pipe protocol of docs/compatibility.md §4 and the contract of
 * catalog/templates/README.md. Started once per warm runner with the built algorithm as the
 * working directory; it requires the entry once (its top-level code is the load step), prints
 * PIPE_INIT_COMPLETE, then answers one JSON request per stdin line with exactly one JSON line
 * on the response FIFO. The algorithm's own prints stay on stdout/stderr (the call's stdout);
 * responses go only to the FIFO. CommonJS, no dependencies: it must not touch the user's
 * node_modules and must load before any user code.
 */
'use strict';
/* global __dirname -- CommonJS; eslint.config.js declares only require and process */

const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { Buffer } = require('node:buffer');
const { Readable, Writable } = require('node:stream');
const { pathToFileURL } = require('node:url');

const SENTINEL = 'PIPE_INIT_COMPLETE';
const FIFO = process.env.ALGOHOST_RESPONSE_FIFO || '/tmp/algoout';
const HARNESS_DIR = __dirname;
/**
 * The output mark (templates/README.md, "Output marks"): written to stdout and stderr after each
 * call's output, so the service can cut the streams per call. Taken out of the environment before
 * any user code runs: an algorithm that prints its environment (or a subprocess that does) must
 * not print it.
 */
const MARK = process.env.ALGOHOST_OUTPUT_MARK ? Buffer.from(process.env.ALGOHOST_OUTPUT_MARK, 'utf8') : undefined;
delete process.env.ALGOHOST_OUTPUT_MARK;
/**
 * Where the adapter's wrapper (`exec node runner.cjs 8>&1 9>&2`) put copies of fds 1 and 2: Node
 * has no dup(), and the service's stdio are Unix sockets, which /proc/self/fd/N cannot reopen.
 */
const SPARE_FDS = { 1: 8, 2: 9 };
/** A tiny shared buffer, only to sleep with Atomics.wait while a full pipe drains. */
const NAP = new Int32Array(new SharedArrayBuffer(4));

/** A failure of the harness itself (no entry point, input it cannot convert), with the type to answer. */
class HarnessError extends Error {
  constructor(errorType, message) {
    super(message);
    this.error_type = errorType;
  }
}

/** algoname from algorithmia.conf, else the name the service passed in. */
function algorithmName() {
  try {
    const conf = JSON.parse(fs.readFileSync('algorithmia.conf', 'utf8'));
    if (conf && typeof conf.algoname === 'string' && conf.algoname) return conf.algoname;
  } catch {
    // missing or unreadable: fall back
  }
  return process.env.ALGOHOST_ALGORITHM_NAME || 'Algorithm';
}

/** The entry: `main` of package.json, else src/<Name>.js. */
function entryPoint(name) {
  const candidates = [];
  try {
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
    if (pkg && typeof pkg.main === 'string' && pkg.main) candidates.push(pkg.main);
  } catch {
    // no package.json: src/<Name>.js
  }
  candidates.push(`src/${name}.js`);
  for (const c of candidates) {
    try {
      return require.resolve(path.resolve(c));
    } catch {
      // try the next one
    }
  }
  throw new HarnessError('LoadingError', `the entry point ${candidates.join(' (main of package.json) or ')} does not exist`);
}

/**
 * Requires the entry once. An ES module that require() cannot load (Node < 20.19, or one with
 * top-level await) is imported instead; neither error ran any of its code.
 */
async function loadAlgorithm() {
  const entry = entryPoint(algorithmName());
  let exported;
  try {
    exported = require(entry);
  } catch (err) {
    if (!err || (err.code !== 'ERR_REQUIRE_ESM' && err.code !== 'ERR_REQUIRE_ASYNC_MODULE')) throw err;
    exported = await import(pathToFileURL(entry).href);
  }
  const apply = exported && typeof exported.apply === 'function' ? exported.apply : exported && exported.default && exported.default.apply;
  if (typeof apply !== 'function') {
    throw new HarnessError('LoadingError', `${path.relative(process.cwd(), entry)} does not export a function apply(input, cb)`);
  }
  return { apply, owner: exported.apply === apply ? exported : exported.default };
}

/** The request's data as apply receives it: text → string, binary → Buffer, json → value. */
function convertInput(request) {
  if (!request || typeof request !== 'object') throw new HarnessError('InputError', 'the request is not a JSON object');
  const { content_type: type, data } = request;
  if (type === 'json') return data === undefined ? null : data;
  if (type === 'text') {
    if (typeof data !== 'string') throw new HarnessError('InputError', 'text input must be a string');
    return data;
  }
  if (type === 'binary') {
    if (typeof data !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(data))
      throw new HarnessError('InputError', 'binary input must be base64');
    return Buffer.from(data, 'base64');
  }
  throw new HarnessError('InputError', `unknown content_type ${JSON.stringify(type)} (json, text or binary)`);
}

/**
 * Calls apply(input, cb) and settles with the first of: cb called, a returned promise settling,
 * a synchronous throw (later calls of cb are ignored). An error thrown asynchronously while the
 * call runs (uncaught) fails this call too. An apply declared without a callback parameter that
 * returns a value (not a promise) answers with it rather than waiting for a cb that never comes.
 */
function invoke(algorithm, input) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      currentCall = undefined;
      fn(value);
    };
    currentCall = { fail: (err) => settle(reject, err) };
    const cb = (err, result) => {
      if (err) settle(reject, err);
      else settle(resolve, result);
    };
    try {
      const returned = algorithm.apply.call(algorithm.owner, input, cb);
      if (returned && typeof returned.then === 'function') {
        returned.then(
          (value) => settle(resolve, value),
          (err) => settle(reject, err === undefined || err === null ? new Error(String(err)) : err),
        );
      } else if (returned !== undefined && algorithm.apply.length < 2) {
        // Beyond the contract: apply(input) that takes no callback and returns its result.
        settle(resolve, returned);
      }
    } catch (err) {
      settle(reject, err === undefined || err === null ? new Error(String(err)) : err);
    }
  });
}

/** The call in flight, failed by an uncaught error or unhandled rejection. */
let currentCall;

/** Result classification: Buffer/Uint8Array → binary, string → text, undefined → null, else json. */
function successResponse(result) {
  if (result instanceof Uint8Array) {
    const b64 = Buffer.from(result.buffer, result.byteOffset, result.byteLength).toString('base64');
    return `{"result":${JSON.stringify(b64)},"metadata":{"content_type":"binary"}}`;
  }
  if (typeof result === 'string') return `{"result":${JSON.stringify(result)},"metadata":{"content_type":"text"}}`;
  let json;
  try {
    json = result === undefined ? 'null' : JSON.stringify(result);
  } catch (err) {
    throw new HarnessError('AlgorithmError', `the result cannot be serialized as JSON: ${messageOf(err)}`);
  }
  // Functions and symbols have no JSON form: JSON.stringify returns undefined.
  return `{"result":${json === undefined ? 'null' : json},"metadata":{"content_type":"json"}}`;
}

function messageOf(err) {
  if (err && typeof err === 'object' && typeof err.message === 'string') return err.message;
  return String(err);
}

/** The error envelope; error_type is the error's own string error_type, else the default. */
function errorResponse(err, defaultType) {
  const message = messageOf(err);
  const ownType = err && typeof err === 'object' && typeof err.error_type === 'string' && err.error_type ? err.error_type : undefined;
  let stack = err && typeof err === 'object' && typeof err.stack === 'string' && !(err instanceof HarnessError) ? err.stack : '';
  // The harness's own frames (and Node's below them) say nothing about the algorithm.
  stack = stack
    .split('\n')
    .filter((line) => !line.includes(HARNESS_DIR) && !line.includes('(node:internal/') && !line.includes('at new Promise (<anonymous>)'))
    .join('\n');
  return JSON.stringify({
    error: { message, stacktrace: stack, stack_trace: stack, error_type: ownType || defaultType },
  });
}

/**
 * The harness's own descriptor for output fd `fd`, taken before user code runs, so that an
 * algorithm that closes fd 1 or 2 (fs.closeSync) or replaces process.stdout / its write() loses
 * no mark: the copy the adapter's wrapper made (same inode), else a reopened /proc/self/fd/N (a
 * pipe or terminal when run by hand), else the fd itself.
 */
function ownOutput(fd) {
  const spare = SPARE_FDS[fd];
  try {
    const a = fs.fstatSync(fd);
    const b = fs.fstatSync(spare);
    if (a.dev === b.dev && a.ino === b.ino && a.rdev === b.rdev) return spare;
  } catch {
    // no copy: run without the wrapper
  }
  try {
    // Only a pipe or a terminal: a regular file reopened would have its own offset, and the two
    // would write over each other. Node's own fds are close-on-exec.
    const st = fs.fstatSync(fd);
    if (st.isFIFO() || st.isCharacterDevice()) return fs.openSync(`/proc/self/fd/${fd}`, fs.constants.O_WRONLY | fs.constants.O_NOCTTY);
  } catch {
    // closed already, or not reopenable: the fd itself
  }
  return fd;
}

/**
 * Writes all of data to fd at once. The fd may be non-blocking (Node makes its stdio sockets so,
 * and a copy shares that flag): on EAGAIN it waits a millisecond for the service to read.
 */
function writeAllSync(fd, data) {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += fs.writeSync(fd, data, offset, data.length - offset);
    } catch (err) {
      if (!err || err.code !== 'EAGAIN') throw err;
      Atomics.wait(NAP, 0, 0, 1);
    }
  }
}

/** process.stdout and process.stderr as the harness found them (flushOutput). */
let originalStreams = [];
/** The harness's own copies of fds 1 and 2 (ownOutput). */
let outputs = { stdout: 1, stderr: 2 };

/**
 * Waits until everything written to stdout and stderr so far has left the process. On pipes and
 * sockets process.stdout/stderr write asynchronously: a write's callback runs once libuv handed
 * it to the kernel, and writes complete in order, so an empty write's callback means all is out.
 * The streams are the ones the harness found, written with Writable's own write(): an algorithm
 * that replaced process.stdout or its write() (to silence or capture prints) cannot keep the
 * callback from coming.
 */
function flushOutput() {
  const flush = (stream) =>
    new Promise((resolve) => {
      if (!(stream instanceof Writable) || stream.destroyed || !stream.writable) return resolve();
      try {
        Writable.prototype.write.call(stream, '', () => resolve());
      } catch {
        resolve();
      }
    });
  return Promise.all(originalStreams.map(flush));
}

/**
 * Ends this call's output: the mark once on stdout and once on stderr, through the harness's own
 * descriptors, after flushOutput and before the response (nothing without ALGOHOST_OUTPUT_MARK).
 */
function writeMarks() {
  if (!MARK) return;
  for (const fd of [outputs.stdout, outputs.stderr]) {
    try {
      writeAllSync(fd, MARK);
    } catch {
      // the service closed the stream: it is not reading marks any more
    }
  }
}

/**
 * The response FIFO, opened by the first response and kept: two system calls fewer per call than
 * opening and closing it for each one.
 */
let responseFd;

/** One response: one line on the FIFO. */
function respond(line) {
  const data = Buffer.from(`${line}\n`, 'utf8');
  if (responseFd === undefined) responseFd = fs.openSync(FIFO, fs.constants.O_WRONLY);
  try {
    writeAllSync(responseFd, data);
  } catch (err) {
    if (err.code !== 'EBADF') throw err;
    // The algorithm closed the harness's descriptor: nothing of this response was written, so it
    // goes whole through the FIFO opened again.
    responseFd = fs.openSync(FIFO, fs.constants.O_WRONLY);
    writeAllSync(responseFd, data);
  }
}

async function handle(line, algorithm, loadError) {
  let response;
  try {
    if (loadError) throw loadError;
    let request;
    try {
      request = JSON.parse(line);
    } catch (err) {
      throw new HarnessError('InputError', `the request is not JSON: ${messageOf(err)}`);
    }
    const input = convertInput(request);
    // The service passes a key scoped to this call (pipeline_enabled algorithms only):
    // require('algorithmia').client() reads it from the environment while the call runs.
    const key = typeof request.api_key === 'string' && request.api_key ? request.api_key : undefined;
    const previous = process.env.ALGORITHMIA_API_KEY;
    if (key) process.env.ALGORITHMIA_API_KEY = key;
    // An Event Flow's delivery says where its input came from (topic, partition, offset, key…):
    // ALGOHOST_EVENT holds it as JSON while the call runs, so the algorithm can be idempotent.
    if (request.event && typeof request.event === 'object') process.env.ALGOHOST_EVENT = JSON.stringify(request.event);
    // Versions with insights_enabled: the token client.reportInsights() sends, only while the call runs.
    if (typeof request.insights_token === 'string' && request.insights_token) process.env.ALGOHOST_INSIGHTS_TOKEN = request.insights_token;
    let result;
    try {
      result = await invoke(algorithm, input);
    } catch (err) {
      response = errorResponse(err, 'AlgorithmError');
    } finally {
      delete process.env.ALGOHOST_EVENT;
      delete process.env.ALGOHOST_INSIGHTS_TOKEN;
      if (key) {
        // The call's key must not outlive the call.
        if (previous === undefined) delete process.env.ALGORITHMIA_API_KEY;
        else process.env.ALGORITHMIA_API_KEY = previous;
      }
    }
    if (response === undefined) response = successResponse(result);
  } catch (err) {
    response = errorResponse(err, err === loadError ? 'LoadingError' : 'AlgorithmError');
  }
  await flushOutput();
  writeMarks();
  respond(response);
}

function onUncaught(err) {
  if (currentCall) {
    currentCall.fail(err);
    return;
  }
  // Nothing to fail (between calls, or after a call settled): report it and keep serving.
  try {
    process.stderr.write(`Uncaught ${err && err.stack ? err.stack : String(err)}\n`);
  } catch {
    // stderr gone
  }
}

/** Keeps the requests to the harness: the algorithm's process.stdin is empty from now on. */
function takeStdin() {
  const requests = process.stdin;
  const empty = new Readable({
    read() {
      this.push(null);
    },
  });
  Object.defineProperty(process, 'stdin', { configurable: true, enumerable: true, get: () => empty });
  return requests;
}

async function main() {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const requests = takeStdin();
  originalStreams = [process.stdout, process.stderr];
  outputs = { stdout: ownOutput(1), stderr: ownOutput(2) };

  let algorithm;
  let loadError;
  try {
    algorithm = await loadAlgorithm();
  } catch (err) {
    const own = !(err instanceof HarnessError) && err && typeof err === 'object' && typeof err.stack === 'string';
    // The load error's own type never replaces LoadingError.
    loadError = { message: messageOf(err), stack: own ? err.stack : '', error_type: 'LoadingError' };
  }
  await flushOutput();
  // Through the harness's own fd 1: the load step may have replaced process.stdout or its write().
  writeAllSync(outputs.stdout, Buffer.from(`${SENTINEL}\n`, 'utf8'));

  // Requests are served one at a time, in order.
  const lines = [];
  let waiting;
  let closed = false;
  const rl = readline.createInterface({ input: requests, crlfDelay: Infinity });
  rl.on('line', (line) => {
    lines.push(line);
    if (waiting) waiting();
  });
  rl.on('close', () => {
    closed = true;
    if (waiting) waiting();
  });
  for (;;) {
    if (lines.length === 0) {
      if (closed) break;
      await new Promise((resolve) => (waiting = resolve));
      waiting = undefined;
      continue;
    }
    const line = lines.shift();
    if (!line.trim()) continue;
    await handle(line, algorithm, loadError);
  }
  await flushOutput();
  process.exit(0);
}

main().catch((err) => {
  try {
    process.stderr.write(`algohost runner: ${err && err.stack ? err.stack : String(err)}\n`);
  } finally {
    process.exit(70);
  }
});
