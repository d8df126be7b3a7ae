/**
 * A real algohost node in its own process (the server as `npm start` runs it, support/server-entry.ts),
 * for tests that kill it (SIGKILL), restart it on the same data directory, or run the `algohost`
 * command beside it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { BUILD_CACHE_DIR, makeTempDir } from './server.js';
import { serverEntryArgs } from './server-entry.js';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** A guard against a hung child, not a performance assertion. */
const WAIT_LIMIT_MS = 90_000;

export interface ChildServer {
  url: string;
  adminKey: string;
  dataDir: string;
  env: Record<string, string>;
  child: ChildProcess;
  output(): string;
  /** SIGKILL, and the exit. */
  kill9(): Promise<void>;
  /** SIGTERM, and the exit. */
  stop(): Promise<void>;
}

/** The environment of a user's shell: ours without any ALGOHOST_* or test-runner variables. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('ALGOHOST_') && !k.startsWith('NODE_TEST')) env[k] = v;
  }
  return { ...env, ...extra };
}

/**
 * Starts a node; `opts.dataDir` and `opts.adminKey` reuse an earlier node's state (a restart).
 * Resolves once it listens and is ready (its /healthz answers 200).
 */
export async function startChildServer(
  opts: {
    dataDir?: string;
    adminKey?: string;
    env?: Record<string, string>;
    /** A command the node runs under, e.g. `nsenter --net=…  --` for a network namespace of the test's making. */
    prefix?: string[];
  } = {},
): Promise<ChildServer> {
  const dataDir = opts.dataDir ?? (await makeTempDir('algohost-child-'));
  const adminKey = opts.adminKey ?? generateApiKey();
  const env = {
    ALGOHOST_PORT: '0',
    ALGOHOST_DATA_DIR: dataDir,
    ALGOHOST_ADMIN_KEY: adminKey,
    ALGOHOST_LOG_LEVEL: 'info',
    ALGOHOST_BUILD_CACHE_DIR: BUILD_CACHE_DIR,
    ALGOHOST_BUILD_CACHE_SHARED: 'true',
    ...opts.env,
  };
  const [command, ...args] = [...(opts.prefix ?? []), process.execPath, ...serverEntryArgs()];
  const child = spawn(command!, args, {
    cwd: REPO_ROOT,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), WAIT_LIMIT_MS);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /algohost listening on (http:\/\/[0-9.]+:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}):\n${output}`));
    });
  });
  // It listens before its services are ready (503 "starting" meanwhile).
  for (;;) {
    const res = await fetch(`${url}/healthz`).catch(() => undefined);
    if (res?.status === 200) break;
    if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const signal = async (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    await exited;
  };
  return { url, adminKey, dataDir, env, child, output: () => output, kill9: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
}

/** Removes a data directory a child server left (its files belong to root and the sandbox uid). */
export async function removeDataDir(dir: string): Promise<void> {
  await fs.promises.rm(dir, { recursive: true, force: true });
}
