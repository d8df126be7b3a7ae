/**
 * A real S3-compatible server on loopback for tests: s3rver (an npm devDependency) in a child
 * process of its own, on a free port, storing in a temporary directory removed on stop. It can
 * be taken down and brought back on the same port with the same objects (an outage, not a loss:
 * moto, the other S3 server of the tests, keeps its objects only in memory).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from './server.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

// Prints the bound address as one JSON line, then serves until killed. s3rver knows one key
// pair, S3RVER/S3RVER, built in; it is swapped for a random one (argv 3 and 4), so the tests
// write no guessable pair and a request with another key id is refused (InvalidAccessKeyId).
const CHILD = `
const S3rver = require('s3rver');
const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account');
DUMMY_ACCOUNT.revokeAccessKey('S3RVER');
DUMMY_ACCOUNT.createKeyPair(process.argv[3], process.argv[4]);
new S3rver({ port: Number(process.argv[2]), address: '127.0.0.1', silent: true, directory: process.argv[1] })
  .run()
  .then((a) => console.log(JSON.stringify(a)), (e) => { console.error(e); process.exit(1); });
`;

export interface S3TestServer {
  endpoint: string;
  /** Settings that point an algohost node at a fresh bucket of this server. */
  env(bucket: string): Record<string, string>;
  /** Stops the server process (connections are refused), keeping its objects. */
  halt(): Promise<void>;
  /** Starts it again on the same port with the same objects. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts s3rver on `port` (0 = any free one); resolves with the child and the port it bound. */
async function spawnS3rver(dir: string, port: number, keys: S3Keys): Promise<{ child: ChildProcess; port: number }> {
  // s3rver makes ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider.
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', '-e', CHILD, dir, String(port), keys.id, keys.secret], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const bound = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before listening: ${err}`)));
  });
  return { child, port: bound };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface S3Keys {
  id: string;
  secret: string;
}

export async function startS3Server(): Promise<S3TestServer> {
  const dir = await makeTempDir('algohost-s3-');
  const keys: S3Keys = {
    id: `AK${crypto.randomBytes(9).toString('hex').toUpperCase()}`,
    secret: crypto.randomBytes(30).toString('base64'),
  };
  let { child, port } = await spawnS3rver(dir, 0, keys);
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    env: (bucket) => ({
      ALGOHOST_BLOB_STORE: 's3',
      ALGOHOST_S3_ENDPOINT: endpoint,
      ALGOHOST_S3_BUCKET: bucket,
      ALGOHOST_S3_ACCESS_KEY_ID: keys.id,
      ALGOHOST_S3_SECRET_ACCESS_KEY: keys.secret,
    }),
    halt: () => kill(child),
    resume: async () => {
      ({ child, port } = await spawnS3rver(dir, port, keys));
    },
    stop: async () => {
      await kill(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
