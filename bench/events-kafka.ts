/**
 * Event Flows throughput and latency: Kafka → a no-op Python algorithm (a subscriber flow whose
 * version is also a publisher flow) → Kafka, through a real algohost process, against a bare
 * consume-produce loop in this process with the same client (@platformatic/kafka): each record
 * read is written to the output topic at once, offsets committed as it goes. Same broker, same
 * partitions, same records, same run.
 *
 * Two phases per system: a flood (N records produced as fast as the producer goes; records/s
 * from the first produced to the last read back) and a paced run (records at a fixed rate,
 * end-to-end p50/p99 from produce to read back, without a backlog). Target: algohost's records/s
 * ≥ 0.5 × the bare loop's.
 * Run: ALGOHOST_TEST_SERVICES=kafka bash scripts/with-services.sh node --import tsx bench/events-kafka.ts [records=3000] [rate=100]
 * (ALGOHOST_BENCH_RUNNERS: the algorithm's runners, default 2, one per core of the reference machine).
 */
import fs from 'node:fs';
import { Admin, Consumer, type Message, Producer, ProduceAcks } from '@platformatic/kafka';
import { api, cpuSeconds, deployNoop, report, startAlgohost, tempDir } from './support.js';

const RECORDS = Number(process.argv[2] ?? 3000);
const RATE = Number(process.argv[3] ?? 100);
const PARTITIONS = 4;
const BROKERS = process.env.ALGOHOST_TEST_KAFKA_BROKERS;
if (!BROKERS) throw new Error('no Kafka: run through scripts/with-services.sh (ALGOHOST_TEST_SERVICES=kafka)');
const run = Date.now().toString(36);

interface Phase {
  recordsPerSecond: number;
  p50: number;
  p99: number;
}

/** Reads `topic` from the start until `count` records of phase `tag` came; each value holds its send time. */
function readBack(
  topic: string,
  count: number,
  tag: string,
): { done: Promise<number[]>; ready: Promise<void>; close: () => Promise<void> } {
  const consumer = new Consumer({ clientId: 'bench-reader', groupId: `bench-reader-${topic}-${tag}`, bootstrapBrokers: [BROKERS!] });
  const latencies: number[] = [];
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  const done = (async () => {
    const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false, maxWaitTime: 50 });
    resolveReady();
    return new Promise<number[]>((resolve) => {
      stream.on('data', (m: Message) => {
        const value = JSON.parse(m.value!.toString()) as { t: number; p: string };
        if (value.p !== tag) return;
        latencies.push(Date.now() - value.t);
        if (latencies.length === count) resolve(latencies);
      });
    });
  })();
  const close = () => new Promise<void>((resolve, reject) => consumer.close(true, (err) => (err ? reject(err) : resolve())));
  return { done, ready, close };
}

/** Produces `count` records `{t, i, p: tag}` to `topic`: as fast as possible, or `rate` per second. */
async function produce(topic: string, count: number, tag: string, rate?: number): Promise<number> {
  const producer = new Producer({ clientId: 'bench-producer', bootstrapBrokers: [BROKERS!], acks: ProduceAcks.LEADER });
  const started = Date.now();
  try {
    const batch = rate ? 1 : 100;
    for (let i = 0; i < count; i += batch) {
      if (rate) {
        const due = started + (i * 1000) / rate;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      }
      const n = Math.min(batch, count - i);
      await producer.send({
        messages: Array.from({ length: n }, (_, k) => ({
          topic,
          partition: (i + k) % PARTITIONS,
          value: Buffer.from(JSON.stringify({ t: Date.now(), i: i + k, p: tag })),
          headers: new Map([[Buffer.from('content-type'), Buffer.from('application/json')]]),
        })),
      });
    }
  } finally {
    await producer.close();
  }
  return started;
}

/** One phase: produce to `input`, read `output` back; records/s and end-to-end latency. */
async function phase(input: string, output: string, count: number, rate?: number): Promise<Phase> {
  const tag = rate ? 'paced' : 'flood';
  const reader = readBack(output, count, tag);
  await reader.ready;
  const started = await produce(input, count, tag, rate);
  const latencies = await reader.done;
  const ended = Date.now();
  await reader.close();
  latencies.sort((a, b) => a - b);
  return {
    recordsPerSecond: count / ((ended - started) / 1000),
    p50: latencies[Math.floor(count * 0.5)]!,
    p99: latencies[Math.min(count - 1, Math.floor(count * 0.99))]!,
  };
}

/** The baseline: consume `input`, produce each value to `output` at once, commit as it goes. */
async function bareLoop(input: string, output: string): Promise<() => Promise<void>> {
  const consumer = new Consumer({ clientId: 'bench-bare', groupId: `bench-bare-${input}`, bootstrapBrokers: [BROKERS!] });
  const producer = new Producer({ clientId: 'bench-bare', bootstrapBrokers: [BROKERS!], acks: ProduceAcks.ALL });
  const stream = await consumer.consume({ topics: [input], mode: 'earliest', autocommit: 100, maxWaitTime: 50 });
  stream.on('data', (m: Message) => {
    void producer.send({ messages: [{ topic: output, value: m.value!, headers: m.headers }] });
  });
  return async () => {
    await stream.close();
    await new Promise<void>((resolve, reject) => consumer.close(true, (err) => (err ? reject(err) : resolve())));
    await producer.close();
  };
}

async function topics(names: string[]): Promise<void> {
  const admin = new Admin({ clientId: 'bench-admin', bootstrapBrokers: [BROKERS!] });
  try {
    await admin.createTopics({ topics: names, partitions: PARTITIONS, replicas: 1 });
  } finally {
    await admin.close();
  }
}

const t = (name: string) => `bench-${name}-${run}`;
await topics([t('bare-in'), t('bare-out'), t('bare-in-paced'), t('bare-out-paced'), t('algo-in'), t('algo-out')]);

// The bare loop first, in this process.
let stop = await bareLoop(t('bare-in'), t('bare-out'));
const bareFlood = await phase(t('bare-in'), t('bare-out'), RECORDS);
await stop();
stop = await bareLoop(t('bare-in-paced'), t('bare-out-paced'));
const barePaced = await phase(t('bare-in-paced'), t('bare-out-paced'), RATE * 5, RATE);
await stop();

// algohost: the no-op algorithm subscribes to algo-in and publishes to algo-out.
const work = tempDir('bench-events-');
const h = await startAlgohost({
  ALGOHOST_RUNNERS_PER_ALGORITHM: process.env.ALGOHOST_BENCH_RUNNERS ?? '2',
  ALGOHOST_MAX_CALLS_PER_ACCOUNT: '64',
});
let ours: { flood: Phase; paced: Phase } | undefined;
let cpuMsPerRecord: number | undefined;
try {
  const { key } = await deployNoop(h, work);
  await api(h.url, key, 'POST', '/v1/algorithms/bench/Noop/versions', { version_info: { version_type: 'major' } });
  await api(h.url, h.adminKey, 'POST', '/v1/admin/event-clusters', { name: 'bench', bootstrap_servers: [BROKERS] });
  for (const [topic, role] of [
    [t('algo-in'), 'subscriber'],
    [t('algo-out'), 'publisher'],
  ] as const) {
    const flow = await api(h.url, h.adminKey, 'POST', '/v1/admin/event-clusters/bench/assignments', {
      algorithm: 'bench/Noop',
      topic,
      role,
    });
    await api(h.url, key, 'PATCH', `/v1/algorithms/bench/Noop/event-flows/${flow.id}`, { enabled: true, version: '1.0.0' });
  }
  for (;;) {
    const flows = (await api(h.url, key, 'GET', '/v1/algorithms/bench/Noop/event-flows')).results as { status: { state: string } | null }[];
    if (flows.some((f) => f.status?.state === 'running')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const cpu0 = cpuSeconds(h.process.pid!);
  const flood = await phase(t('algo-in'), t('algo-out'), RECORDS);
  cpuMsPerRecord = ((cpuSeconds(h.process.pid!) - cpu0) * 1000) / RECORDS;
  const paced = await phase(t('algo-in'), t('algo-out'), RATE * 5, RATE);
  ours = { flood, paced };
} finally {
  await h.stop();
  fs.rmSync(work, { recursive: true, force: true });
}

const f = (p: Phase) => `${p.recordsPerSecond.toFixed(0)} records/s, end-to-end p50 ${p.p50} ms / p99 ${p.p99} ms`;
report([
  [`Kafka → no-op → Kafka, ${PARTITIONS} partitions; flood of ${RECORDS} records, then ${RATE} records/s for 5 s`, ''],
  ['algohost flood', f(ours.flood)],
  ['algohost server CPU per record (user + system; runners not counted)', `${cpuMsPerRecord?.toFixed(2) ?? '?'} ms`],
  ['bare consume-produce loop flood', f(bareFlood)],
  ['algohost paced', f(ours.paced)],
  ['bare consume-produce loop paced', f(barePaced)],
  ['records/s ratio to bare, flood (target ≥ 0.5)', (ours.flood.recordsPerSecond / bareFlood.recordsPerSecond).toFixed(2)],
  ['paced p50 / p99 added by algohost', `${ours.paced.p50 - barePaced.p50} ms / ${ours.paced.p99 - barePaced.p99} ms`],
]);
