/**
 * The users of the tests' nats-server (scripts/with-services.sh writes them, with new passwords
 * each run, as docs/cluster.md §3 gives them): `api` for API nodes, `worker-1`…`worker-4` for
 * workers (a worker's subjects carry its user, so two workers with different users cannot read
 * each other's calls) and `test`, with every permission, for the tests' own look at the stream
 * and the KV bucket.
 */
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
