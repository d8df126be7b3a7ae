/**
 * The users of the tests' nats-server (scripts/with-services.sh writes them, with new passwords
 * each run, as docs/cluster.md §3 gives them): `api` for API nodes, `worker-1`…`worker-4` for
 * workers (a worker's subjects carry its user, so two workers with different users cannot read
 * each other's calls) and `test`, with every permission, for the tests' own look at the stream
 * and the KV bucket.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';

const USERS = new Map(
  (process.env.ALGOHOST_TEST_NATS_USERS ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const cut = pair.indexOf(':');
      return [pair.slice(0, cut), pair.slice(cut + 1)] as const;
    }),
);

/** auth.conf of the tests' nats-server: a test's own nats-server includes it to require the same users. */
export const NATS_AUTH_CONF = process.env.ALGOHOST_TEST_NATS_AUTH;

export const WORKER_USERS = ['worker-1', 'worker-2', 'worker-3', 'worker-4'] as const;

export function natsPassword(user: string): string {
  const password = USERS.get(user);
  if (password === undefined) throw new Error(`no NATS user ${user} in ALGOHOST_TEST_NATS_USERS: run under scripts/with-services.sh`);
  return password;
}

/** A node's settings for logging in to the tests' nats-server as `user`. */
export function natsCredentials(user: string): Record<string, string> {
  return { ALGOHOST_NATS_USER: user, ALGOHOST_NATS_PASSWORD: natsPassword(user) };
}

let nextWorker = 0;

/** The next worker user, in turn: workers started one after another get different users. */
export function workerCredentials(): Record<string, string> {
  return natsCredentials(WORKER_USERS[nextWorker++ % WORKER_USERS.length]!);
}

/** A connection of the test itself, as `test` (every permission). */
export function connectAsTest(servers: string): Promise<NatsConnection> {
  return connect({ servers, user: 'test', pass: natsPassword('test') });
}

/**
 * A nats-server of a test's own, with the users and permissions of the tests' one, that the test
 * may stop and start again: on the same port and the same JetStream store directory, as an
 * operator's restart does, so the stream, its queued work and the KV bucket survive it.
 */
export interface OwnNats {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startOwnNats(dir: string): Promise<OwnNats> {
  const port = await freePort();
  // nats-server reads an include relative to the configuration's directory, hence the copy.
  fs.copyFileSync(NATS_AUTH_CONF!, path.join(dir, 'auth.conf'));
  fs.writeFileSync(
    path.join(dir, 'nats.conf'),
    `listen: 127.0.0.1:${port}\nmax_payload: 32MB\njetstream { store_dir: "${path.join(dir, 'js')}" }\ninclude "auth.conf"\n`,
  );
  let child: ChildProcess | undefined;
  const own: OwnNats = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      const started = spawn('nats-server', ['-c', path.join(dir, 'nats.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
      await new Promise<void>((resolve, reject) => {
        let out = '';
        started.stderr!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('Server is ready')) resolve();
        });
        started.once('exit', () => reject(new Error(`nats-server exited: ${out}`)));
      });
      child = started;
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((r) => running.once('exit', r));
      running.kill('SIGTERM');
      await exited;
    },
  };
  await own.start();
  return own;
}

/** A free TCP port on loopback (for a server that must come back on the same one). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}
