/**
 * A FAKE Azure Service Bus endpoint for tests: no Service Bus emulator can run on these machines
 * (the vendor's is a container image), so this speaks, on `rhea`, just the part of AMQP 1.0 that
 * `@azure/service-bus` uses to receive from a queue in peek-lock mode:
 *
 * - the `$cbs` put-token exchange: the SAS token is checked against the queue's key (HMAC-SHA256
 *   of the URL-encoded audience and expiry, as Service Bus does); 202 authorizes the audience,
 *   401 refuses it, and a receiver attaching to a queue it was not authorized for is detached
 *   with `amqp:unauthorized-access`;
 * - peek-lock delivery: each message is sent unsettled with a lock token (the delivery tag),
 *   `x-opt-locked-until`, `x-opt-sequence-number` and its delivery count (the AMQP header's,
 *   counting earlier deliveries);
 * - settlement: accepted = complete (gone), modified = abandon (back to the queue, its delivery
 *   count up), rejected = dead-letter, each settled back so the SDK's promise resolves; a lock
 *   that expires counts as a delivery too;
 * - max delivery count: a message delivered that many times and abandoned again moves to
 *   `<queue>/$DeadLetterQueue` with DeadLetterReason MaxDeliveryCountExceeded, readable
 *   through the SDK like the real dead-letter sub-queue;
 * - lock renewal (`com.microsoft:renew-lock` on `<queue>/$management`, what the SDK's automatic
 *   lock renewal sends): the lock lasts the queue's lock duration again, so a message stays with
 *   a live receiver however long its call runs, and returns only when that receiver goes quiet;
 *   a lock that is gone answers 410 `com.microsoft:message-lock-lost`.
 *
 * Not implemented (the adapter does not use them): the other `$management` operations,
 * sessions, topics and subscriptions, TLS (the SDK's development-emulator mode speaks plain AMQP).
 */
import crypto from 'node:crypto';
import type { AddressInfo, Server } from 'node:net';
import rhea, { type Connection, type Delivery, type EventContext, type Message, type Receiver, type Sender } from 'rhea';

export interface FakeQueueOptions {
  /** Deliveries after which an abandoned message is dead-lettered (Service Bus's default is 10). */
  maxDeliveryCount?: number;
  lockDurationMs?: number;
  keyName: string;
  key: string;
}

interface StoredMessage {
  messageId: string;
  body: Buffer | string;
  contentType?: string;
  sequenceNumber: number;
  /** Earlier deliveries (the AMQP header's delivery_count). */
  deliveries: number;
  deadLetterReason?: string;
  deadLetterDescription?: string;
}

/** rhea's outcome constructors (its typings leave them out). */
interface Outcomes {
  accepted(): { described(): unknown };
  modified(): { described(): unknown };
  rejected(): { described(): unknown };
}

interface Lock {
  message: StoredMessage;
  queue: FakeQueue;
  /** Received from the dead-letter sub-queue (abandoning it there puts it back there). */
  deadLetter: boolean;
  delivery: Delivery;
  timer: NodeJS.Timeout;
}

class FakeQueue {
  readonly ready: StoredMessage[] = [];
  readonly deadLetters: StoredMessage[] = [];
  renewals = 0;
  constructor(
    readonly name: string,
    readonly options: Required<FakeQueueOptions>,
  ) {}
}

export class FakeServiceBus {
  private readonly queues = new Map<string, FakeQueue>();
  private readonly consumers = new Set<Sender>();
  private readonly locks = new Map<string, Lock>();
  private readonly authorized = new WeakMap<Connection, Set<string>>();
  private readonly connections = new Set<Connection>();
  private sequence = 0;
  private server!: Server;
  /** Completed, abandoned and dead-lettered messages, in order, for the test to read. */
  readonly settlements: { queue: string; messageId: string; outcome: 'completed' | 'abandoned' | 'dead-lettered' | 'lock-expired' }[] = [];

  private constructor() {}

  static async start(): Promise<FakeServiceBus> {
    const fake = new FakeServiceBus();
    await fake.listen();
    return fake;
  }

  /** host:port for an `sb://host:port/<queue>` URI. */
  get host(): string {
    const a = this.server.address() as AddressInfo;
    return `127.0.0.1:${a.port}`;
  }

  createQueue(name: string, options: FakeQueueOptions): void {
    this.queues.set(name, new FakeQueue(name, { maxDeliveryCount: 10, lockDurationMs: 60_000, ...options }));
  }

  /** Puts a message on a queue, as a producer would. */
  enqueue(queue: string, body: Buffer | string, opts: { messageId?: string; contentType?: string } = {}): string {
    const q = this.queue(queue);
    const messageId = opts.messageId ?? crypto.randomUUID();
    q.ready.push({ messageId, body, contentType: opts.contentType, sequenceNumber: ++this.sequence, deliveries: 0 });
    this.pump();
    return messageId;
  }

  /** Lock renewals the queue granted. */
  renewals(queue: string): number {
    return this.queue(queue).renewals;
  }

  /** What is waiting (not locked) on a queue. */
  readyCount(queue: string): number {
    return this.queue(queue).ready.length;
  }

  deadLetters(queue: string): readonly StoredMessage[] {
    return this.queue(queue).deadLetters;
  }

  async stop(): Promise<void> {
    for (const lock of this.locks.values()) clearTimeout(lock.timer);
    for (const c of this.connections) c.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private queue(name: string): FakeQueue {
    const q = this.queues.get(name);
    if (!q) throw new Error(`no fake queue ${name}`);
    return q;
  }

  private async listen(): Promise<void> {
    // Plain settlement events: a `modified` disposition is an abandon, not a release.
    const container = rhea.create_container({ id: 'fake-servicebus', treat_modified_as_released: false, autoaccept: true });
    container.on('connection_open', (ctx: EventContext) => {
      this.connections.add(ctx.connection);
      this.authorized.set(ctx.connection, new Set());
    });
    container.on('connection_close', (ctx: EventContext) => this.connections.delete(ctx.connection));
    container.on('disconnected', (ctx: EventContext) => {
      this.connections.delete(ctx.connection);
      this.dropConsumersOf(ctx.connection);
    });
    // The client's receivers: our senders. `$cbs` replies, or a queue (or its dead-letter sub-queue).
    container.on('sender_open', (ctx: EventContext) => {
      const sender = ctx.sender!;
      echoTermini(sender);
      const address = sender.source?.address ?? '';
      if (address === '$cbs' || MANAGEMENT.test(address)) return;
      const { queue } = this.parseAddress(address);
      if (!this.queues.has(queue)) {
        sender.close({ condition: 'amqp:not-found', description: `the messaging entity '${address}' could not be found` });
        return;
      }
      if (!this.authorized.get(ctx.connection)?.has(queue)) {
        sender.close({ condition: 'amqp:unauthorized-access', description: `unauthorized access to '${address}': put a token first` });
        return;
      }
      this.consumers.add(sender);
      this.pump();
    });
    container.on('sender_close', (ctx: EventContext) => this.consumers.delete(ctx.sender!));
    container.on('sendable', () => this.pump());
    // The SDK drains its link when a receive's wait ends: send what is there, then say drained.
    container.on('sender_draining', (ctx: EventContext) => {
      this.pump();
      ctx.sender!.set_drained(true);
    });
    // The client's senders: `$cbs` requests.
    container.on('receiver_open', (ctx: EventContext) => echoTermini(ctx.receiver!));
    container.on('message', (ctx: EventContext) => {
      const target = ctx.receiver?.target?.address;
      if (target === '$cbs') this.putToken(ctx);
      else if (target && MANAGEMENT.test(target)) this.manage(ctx, target);
    });
    container.on('accepted', (ctx: EventContext) => this.settle(ctx.delivery!, 'completed'));
    container.on('modified', (ctx: EventContext) => this.settle(ctx.delivery!, 'abandoned'));
    container.on('released', (ctx: EventContext) => this.settle(ctx.delivery!, 'abandoned'));
    container.on('rejected', (ctx: EventContext) => this.settle(ctx.delivery!, 'dead-lettered'));
    // A client that goes away mid-delivery is not an error of the fake.
    container.on('error', () => {});
    this.server = container.listen({ host: '127.0.0.1', port: 0 }) as unknown as Server;
    await new Promise<void>((resolve) => this.server.once('listening', () => resolve()));
  }

  /** `queue` or `queue/$DeadLetterQueue` (the SDK names the sub-queue so); a token for `queue/$management` is one for the queue. */
  private parseAddress(address: string): { queue: string; deadLetter: boolean } {
    const trimmed = address
      .replace(/^sb:\/\/[^/]+\//, '')
      .replace(/^\//, '')
      .replace(MANAGEMENT, '');
    const deadLetter = /\/\$deadletterqueue$/i.test(trimmed);
    return { queue: deadLetter ? trimmed.replace(/\/\$deadletterqueue$/i, '') : trimmed, deadLetter };
  }

  /** `$cbs` put-token: a SAS token for an audience `sb://host/<queue>`, checked against that queue's key. */
  private putToken(ctx: EventContext): void {
    const request = ctx.message!;
    const props = (request.application_properties ?? {}) as Record<string, unknown>;
    const audience = String(props.name ?? '');
    const { queue } = this.parseAddress(audience);
    const q = this.queues.get(queue);
    let status = 401;
    let description = 'invalid token';
    if (props.operation !== 'put-token') {
      status = 400;
      description = `unsupported operation ${String(props.operation)}`;
    } else if (!q) {
      status = 404;
      description = `no entity ${queue}`;
    } else if (checkSas(String(request.body), q.options.keyName, q.options.key)) {
      status = 202;
      description = 'Accepted';
      this.authorized.get(ctx.connection)?.add(queue);
    }
    this.reply(ctx, { 'status-code': status, 'status-description': description }, null);
  }

  /** A `$management` request: only renew-lock, for locks this queue holds. */
  private manage(ctx: EventContext, target: string): void {
    const request = ctx.message!;
    const { queue } = this.parseAddress(target);
    const operation = (request.application_properties as Record<string, unknown> | undefined)?.operation;
    if (!this.authorized.get(ctx.connection)?.has(queue)) {
      this.reply(ctx, { 'status-code': 401, 'status-description': `unauthorized access to '${target}'` }, null);
      return;
    }
    if (operation !== 'com.microsoft:renew-lock') {
      this.reply(ctx, { 'status-code': 501, 'status-description': `the fake does not implement ${String(operation)}` }, null);
      return;
    }
    const tokens = ((request.body as Record<string, unknown> | undefined)?.['lock-tokens'] ?? []) as (Buffer | string)[];
    const expirations: Date[] = [];
    for (const t of tokens) {
      const token = typeof t === 'string' ? t : formatUuid(t);
      const lock = this.locks.get(token);
      if (!lock || lock.queue.name !== queue) {
        this.reply(
          ctx,
          {
            'status-code': 410,
            'status-description': `the lock ${token} was lost (it expired, or the message was settled)`,
            'error-condition': 'com.microsoft:message-lock-lost',
          },
          null,
        );
        return;
      }
      clearTimeout(lock.timer);
      lock.timer = setTimeout(() => this.expire(token), lock.queue.options.lockDurationMs);
      lock.queue.renewals++;
      expirations.push(new Date(Date.now() + lock.queue.options.lockDurationMs));
    }
    this.reply(ctx, { 'status-code': 200, 'status-description': 'OK' }, { expirations });
  }

  /** Answers a request-response exchange (`$cbs`, `$management`) on the link named after its reply_to. */
  private reply(ctx: EventContext, properties: Record<string, unknown>, body: unknown): void {
    const request = ctx.message!;
    // The SDK's reply link is named after reply_to (its target address may be empty).
    const reply = [...iterateSenders(ctx.connection)].find((s) => s.name === request.reply_to || s.target?.address === request.reply_to);
    reply?.send({ correlation_id: request.message_id, application_properties: properties, body } as Message);
  }

  /** Sends waiting messages to consumers with credit, each locked until settled or expired. */
  private pump(): void {
    for (const sender of this.consumers) {
      const { queue: name, deadLetter } = this.parseAddress(sender.source?.address ?? '');
      const q = this.queues.get(name);
      if (!q) continue;
      const list = deadLetter ? q.deadLetters : q.ready;
      while (list.length > 0 && sender.sendable()) {
        const m = list.shift()!;
        const lockToken = crypto.randomUUID();
        const lockedUntil = new Date(Date.now() + q.options.lockDurationMs);
        const delivery = sender.send(
          {
            message_id: m.messageId,
            body: m.body,
            content_type: m.contentType,
            delivery_count: m.deliveries,
            message_annotations: {
              'x-opt-sequence-number': m.sequenceNumber,
              'x-opt-enqueued-time': new Date(),
              'x-opt-locked-until': lockedUntil,
            },
            ...(m.deadLetterReason
              ? { application_properties: { DeadLetterReason: m.deadLetterReason, DeadLetterErrorDescription: m.deadLetterDescription } }
              : {}),
          } as Message,
          uuidTag(lockToken),
        );
        const timer = setTimeout(() => this.expire(lockToken), q.options.lockDurationMs);
        this.locks.set(lockToken, { message: m, queue: q, deadLetter, delivery, timer });
      }
    }
  }

  private settle(delivery: Delivery, outcome: 'completed' | 'abandoned' | 'dead-lettered'): void {
    const entry = [...this.locks.entries()].find(([, l]) => l.delivery === delivery);
    // Tell the client its settlement took effect (it waits for this; an error in the state would fail it).
    const states = rhea.message as unknown as Outcomes;
    const state = outcome === 'completed' ? states.accepted() : outcome === 'abandoned' ? states.modified() : states.rejected();
    delivery.update(true, state.described());
    if (!entry) return;
    const [token, lock] = entry;
    this.locks.delete(token);
    clearTimeout(lock.timer);
    this.settlements.push({ queue: lock.queue.name, messageId: lock.message.messageId, outcome });
    if (outcome === 'completed') return;
    if (lock.deadLetter) {
      lock.queue.deadLetters.unshift(lock.message);
      return;
    }
    if (outcome === 'dead-lettered') {
      const state = delivery.remote_state as { error?: { info?: Record<string, unknown> } } | undefined;
      lock.message.deadLetterReason = String(state?.error?.info?.DeadLetterReason ?? 'DeadLettered');
      lock.message.deadLetterDescription = String(state?.error?.info?.DeadLetterErrorDescription ?? '');
      lock.queue.deadLetters.push(lock.message);
      return;
    }
    this.redeliver(lock);
  }

  private expire(token: string): void {
    const lock = this.locks.get(token);
    if (!lock) return;
    this.locks.delete(token);
    this.settlements.push({ queue: lock.queue.name, messageId: lock.message.messageId, outcome: 'lock-expired' });
    this.redeliver(lock);
  }

  /** Back to the front of the queue with one more delivery counted, or to the dead letters. */
  private redeliver(lock: Lock): void {
    const m = lock.message;
    if (lock.deadLetter) {
      lock.queue.deadLetters.unshift(m);
      setImmediate(() => this.pump());
      return;
    }
    m.deliveries += 1;
    if (m.deliveries >= lock.queue.options.maxDeliveryCount) {
      m.deadLetterReason = 'MaxDeliveryCountExceeded';
      m.deadLetterDescription = `Message could not be consumed after ${lock.queue.options.maxDeliveryCount} delivery attempts.`;
      lock.queue.deadLetters.push(m);
    } else {
      lock.queue.ready.unshift(m);
    }
    setImmediate(() => this.pump());
  }

  private dropConsumersOf(connection: Connection): void {
    for (const s of this.consumers) if (s.connection === connection) this.consumers.delete(s);
  }
}

/** The management node of a queue: `<queue>/$management`. */
const MANAGEMENT = /\/\$management$/i;

/** A UUID as the SDK sends it in lock-tokens (AMQP uuid: 16 bytes in network order). */
function formatUuid(b: Buffer): string {
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Attaches answered with the client's own source and target (the SDK reads them back). */
function echoTermini(link: Sender | Receiver): void {
  if (link.source) link.set_source(link.source);
  if (link.target) link.set_target(link.target);
}

function* iterateSenders(connection: Connection): Generator<Sender> {
  // rhea keeps a connection's links in its sessions; find_sender walks them.
  const found: Sender[] = [];
  connection.find_sender((s: Sender) => {
    found.push(s);
    return false;
  });
  yield* found;
}

/** A lock token as Service Bus sends it: the delivery tag holds the GUID in .NET byte order. */
function uuidTag(uuid: string): Buffer {
  const b = Buffer.from(uuid.replace(/-/g, ''), 'hex');
  return Buffer.concat([
    Buffer.from(b.subarray(0, 4)).reverse(),
    Buffer.from(b.subarray(4, 6)).reverse(),
    Buffer.from(b.subarray(6, 8)).reverse(),
    b.subarray(8),
  ]);
}

/** `SharedAccessSignature sr=…&sig=…&se=…&skn=…`, signed with the key as Service Bus signs it. */
function checkSas(token: string, keyName: string, key: string): boolean {
  const m = /^SharedAccessSignature (.+)$/.exec(token);
  if (!m) return false;
  const fields = new URLSearchParams(m[1]!.replace(/\+/g, '%2B'));
  const sr = fields.get('sr');
  const sig = fields.get('sig');
  const se = fields.get('se');
  if (!sr || !sig || !se || fields.get('skn') !== keyName || Number(se) * 1000 < Date.now()) return false;
  const expected = crypto
    .createHmac('sha256', key)
    .update(`${encodeURIComponent(sr)}\n${se}`)
    .digest('base64');
  return sig === expected;
}
