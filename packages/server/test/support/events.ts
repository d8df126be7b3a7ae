/**
 * What the Event Flows tests share: the brokers scripts/with-services.sh started (their
 * addresses in ALGOHOST_TEST_KAFKA_BROKERS, ALGOHOST_TEST_KAFKA2_BROKERS and
 * ALGOHOST_TEST_SQS_ENDPOINT; `npm test` starts them), published Python algorithms made from
 * source text, and a Kafka client for producing and reading what the flows wrote.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { Admin, Consumer, type Message, Producer } from '@platformatic/kafka';
import type { EventFlow } from '../../src/domain/events/model.js';
import { createAndBuild } from './algorithms.js';
import type { TestUser } from './fixtures.js';
import type { Client } from './http.js';
import { makeTempDir } from './server.js';

export const KAFKA = process.env.ALGOHOST_TEST_KAFKA_BROKERS;
export const KAFKA2 = process.env.ALGOHOST_TEST_KAFKA2_BROKERS;
export const SQS = process.env.ALGOHOST_TEST_SQS_ENDPOINT;

/** The reason a test is skipped when a broker was not started (undefined when it was). */
export const needs = (what: 'kafka' | 'kafka2' | 'sqs'): string | undefined => {
  const set = what === 'kafka' ? KAFKA : what === 'kafka2' ? KAFKA2 : SQS;
  if (set) return undefined;
  return `no ${what === 'sqs' ? 'ElasticMQ' : 'Kafka'} broker: run through scripts/with-services.sh (npm test starts the brokers)`;
};

/** Creates `alice/<name>` from one Python source file (src/<name>.py), builds it and publishes 1.0.0 (with `settings`). */
export async function publishedPython(
  base: string,
  api: Client,
  user: TestUser,
  name: string,
  source: string,
  settings?: Record<string, unknown>,
): Promise<void> {
  const tree = await makeTempDir('algohost-events-algo-');
  try {
    await fs.promises.mkdir(path.join(tree, 'src'));
    await fs.promises.writeFile(
      path.join(tree, 'algorithmia.conf'),
      JSON.stringify({ username: user.name, algoname: name, language: 'python3' }),
    );
    await fs.promises.writeFile(path.join(tree, 'requirements.txt'), '');
    await fs.promises.writeFile(path.join(tree, 'src', '__init__.py'), '');
    await fs.promises.writeFile(path.join(tree, 'src', `${name}.py`), source);
    await createAndBuild(base, api, user, user.name, name, tree, { environment: 'python311' });
  } finally {
    await fs.promises.rm(tree, { recursive: true, force: true });
  }
  const published = await api.post(`/v1/algorithms/${user.name}/${name}/versions`, {
    key: user.key,
    body: { ...(settings ? { settings } : {}), version_info: { version_type: 'major' } },
  });
  assert.equal(published.status, 200, published.text);
}

/** Polls `probe` until it returns a value (not undefined); fails after `what` was awaited too long. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, limitMs = 60_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Takes an account's one call slot (ALGOHOST_MAX_CALLS_PER_ACCOUNT=1) with a slow call and
 * resolves once it holds it, which `slotTaken` (a call of the account answered 429) tells. That
 * probe is a call too: when it reaches the server first it takes the slot itself and the slow
 * call is refused with 429, so the slow call is then sent again. Resolves with the slow call's
 * answer, to await at the end.
 */
export async function holdCallSlot<R extends { status: number }>(
  slowCall: () => Promise<R>,
  slotTaken: () => Promise<boolean>,
): Promise<{ answer: Promise<R> }> {
  let refused = false;
  const send = () =>
    slowCall().then((res) => {
      refused = res.status === 429;
      return res;
    });
  const held = { answer: send() };
  await eventually('the slow call holding the call slot', async () => {
    if (await slotTaken()) return true;
    if (refused) {
      refused = false;
      held.answer = send();
    }
    return undefined;
  });
  return held;
}

export async function createTopics(brokers: string, topics: string[], partitions = 1): Promise<void> {
  const admin = new Admin({ clientId: 'test-admin', bootstrapBrokers: [brokers] });
  try {
    await admin.createTopics({ topics, partitions, replicas: 1 });
  } finally {
    await admin.close();
  }
}

/** A loopback port that was free a moment ago: a broker "there" refuses every connection. */
export async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function deleteTopics(brokers: string, topics: string[]): Promise<void> {
  const admin = new Admin({ clientId: 'test-admin', bootstrapBrokers: [brokers] });
  try {
    await admin.deleteTopics({ topics });
  } finally {
    await admin.close();
  }
}

export async function produce(
  brokers: string,
  topic: string,
  records: { key?: string; value: string | Buffer; headers?: Record<string, string>; partition?: number }[],
): Promise<void> {
  const producer = new Producer({ clientId: 'test-producer', bootstrapBrokers: [brokers] });
  try {
    await producer.send({
      messages: records.map((r) => ({
        topic,
        ...(r.key === undefined ? {} : { key: Buffer.from(r.key) }),
        value: Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value),
        ...(r.partition === undefined ? {} : { partition: r.partition }),
        headers: new Map(Object.entries(r.headers ?? {}).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])),
      })),
    });
  } finally {
    await producer.close();
  }
}

export interface ReadRecord {
  key: string | null;
  value: string;
  headers: Record<string, string>;
  partition: number;
  offset: bigint;
}

/** Reads a topic from its beginning until `count` records came (or fails after a minute). */
export async function readTopic(brokers: string, topic: string, count: number): Promise<ReadRecord[]> {
  const consumer = new Consumer({
    clientId: 'test-reader',
    groupId: `test-reader-${topic}-${Date.now()}-${Math.random()}`,
    bootstrapBrokers: [brokers],
  });
  const out: ReadRecord[] = [];
  try {
    const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 200 });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${out.length} of ${count} records came on ${topic}`)), 60_000);
      stream.on('data', (m: Message) => {
        out.push({
          key: m.key ? m.key.toString() : null,
          value: m.value?.toString() ?? '',
          headers: Object.fromEntries([...m.headers].map(([k, v]) => [k.toString(), v.toString()])),
          partition: m.partition,
          offset: m.offset,
        });
        if (out.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      });
      stream.on('error', reject);
    });
    await stream.close();
  } finally {
    await consumer.close(true);
  }
  return out;
}

/** Messages still in an SQS queue, waiting or received and not yet deleted (ElasticMQ's approximate counts). */
export async function sqsMessagesLeft(sqs: SQSClient, url: string): Promise<number> {
  const attrs = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(attrs.Attributes!.ApproximateNumberOfMessages) + Number(attrs.Attributes!.ApproximateNumberOfMessagesNotVisible);
}

/**
 * An Event Flow as the store keeps it, for tests that write or run one directly: a disabled Kafka
 * subscriber that never ran, made now, with `fields` over it.
 */
export function flowRecord(fields: Partial<EventFlow> & Pick<EventFlow, 'algorithmId' | 'createdBy'>): EventFlow {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    kind: 'kafka',
    role: 'subscriber',
    clusterId: null,
    topic: null,
    sourceUri: null,
    credentialsKind: null,
    credentialsId: null,
    credentialsSecret: null,
    timeoutSeconds: null,
    enabled: false,
    version: null,
    positioned: false,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}
