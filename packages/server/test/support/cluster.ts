/**
 * Nodes of a cluster for the cluster tests: each a separate `npm start` process with its own
 * data directory, in a network namespace of its own when a Lan is given (support/netns.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Lan } from './netns.js';
import { makeTempDir } from './server.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const START = path.join(REPO, 'packages/server/src/main/start.ts');

/** One algohost process of the cluster. */
export interface Node {
  name: string;
  url: string;
  dataDir: string;
  child: ChildProcess;
  log: string[];
}

/** Starts a node; with `lan`, in a network namespace of its own, listening on its own address there. */
export async function startNode(name: string, env: Record<string, string>, lan?: Lan): Promise<Node> {
  const dataDir = await makeTempDir(`algohost-cluster-${name}-`);
  const joined = lan?.join();
  const argv = [...(joined?.prefix ?? []), process.execPath, '--import', 'tsx', START];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...env,
      ALGOHOST_DATA_DIR: dataDir,
      ALGOHOST_PORT: '0',
      ...(joined ? { ALGOHOST_HOST: joined.address } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const listening = new Promise<string>((resolve, reject) => {
    const onLine = (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (!line) continue;
        log.push(line);
        if (log.length > 400) log.shift();
        const m = /algohost listening on (http:\/\/[^"\s]+)/.exec(line);
        if (m) resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onLine);
    child.stderr!.on('data', onLine);
    child.once('close', (code) => reject(new Error(`${name} exited (${code}) while starting:\n${log.slice(-30).join('\n')}`)));
  });
  const url = await listening.catch(async (err: unknown) => {
    await fs.promises.rm(dataDir, { recursive: true, force: true });
    throw err;
  });
  return { name, url, dataDir, child, log };
}

export async function stopNode(node: Node, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (node.child.exitCode === null && node.child.signalCode === null) {
    const exited = new Promise((r) => node.child.once('exit', r));
    node.child.kill(signal);
    await exited;
  }
  await fs.promises.rm(node.dataDir, { recursive: true, force: true });
}

export async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
