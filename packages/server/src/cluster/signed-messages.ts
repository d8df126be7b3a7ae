/**
 * Cluster messages are believed only when a node of the cluster made them: every message a node
 * sends over NATS (work, sync calls, their answers and heartbeats, presence entries, relayed
 * build output) carries a MAC under a key derived from the cluster key (ALGOHOST_CLUSTER_KEY).
 * NATS permissions keep clients off subjects that are not theirs; this is what still holds when
 * a client gets through them (a runner that reaches NATS, a leaked credential, a misconfigured
 * server): a message made or altered without the key is dropped, and so is a genuine one sent
 * again.
 *
 * A signed message is `[1 version][8 issued-at, ms since the epoch, float64 BE][16 nonce]
 * [32 HMAC-SHA256][payload]`. The HMAC covers, in one pass, a canonical encoding of what the
 * message is for (its purpose), the subject it was published on, its reply subject, the request
 * it answers (the request's nonce, for an answer; empty otherwise), the version, the issued-at,
 * the nonce, and the payload itself. So a message cannot be moved to another subject, another
 * reply subject, another purpose (an answer is no request), or another call (a first answer
 * published by someone else on a call's reply subject does not verify, and the caller keeps
 * waiting for its worker's). One HMAC per message, over its bytes: no separate digest pass.
 *
 * Sync calls, answers and build output are refused outside a window (MESSAGE_WINDOW_MS either
 * way, which is also how far nodes' clocks may drift apart) and when their nonce was seen
 * within it. Durable work (builds and async calls in JetStream) may wait in the stream for
 * hours and is redelivered on purpose, so it has no window: its replay is bounded by the
 * database instead (a build runs only while queued, an async call only while its request is
 * running, and as the account that made the request).
 */
import crypto from 'node:crypto';

/** What a signed message is for; part of what the MAC covers. */
export type MessagePurpose = 'run' | 'answer' | 'work' | 'presence' | 'build-event';

/** How far a message's issued-at may be from the receiver's clock, either way. */
export const MESSAGE_WINDOW_MS = 30_000;

const VERSION = 1;
const AT = 1;
const NONCE = 9;
const NONCE_BYTES = 16;
const MAC = NONCE + NONCE_BYTES;
const MAC_BYTES = 32;
/** The signed head before the payload. */
export const SIGNED_HEAD_BYTES = MAC + MAC_BYTES;

/** Why a message was dropped (for the log; never sent back to whoever published it). */
export class MessageRefused extends Error {}

export interface OpenOptions {
  /** The request this answers: its nonce, as returned when it was signed. */
  boundTo?: Uint8Array;
  /** How old (or how far ahead) the issued-at may be; undefined: no window (durable work). */
  windowMs?: number;
  /** Refuse a nonce seen before within the window (every message that has a window). */
  once?: boolean;
}

export interface SignerLog {
  warn(obj: object, msg: string): void;
}

/**
 * Signs and checks the cluster's messages. One per process: its replay memory is shared by
 * every subscription of the node.
 */
export class MessageSigner {
  /** A plain buffer: createHmac sets up faster from one than from a KeyObject. */
  private readonly key: Buffer;
  /** This process's nonces: a random prefix and a counter, unique across nodes without a syscall per message. */
  private readonly noncePrefix = crypto.randomBytes(8);
  private counter = 0;
  /**
   * Nonces seen, in three generations of one window each: a nonce stays known at least two
   * windows, as long as a message stamped up to a window ahead of this clock stays acceptable.
   */
  private generations: Set<string>[] = [new Set(), new Set(), new Set()];
  private rotatedAt: number;
  /** Refusals not yet logged, and when one was last logged, per purpose. */
  private readonly refusals = new Map<MessagePurpose, { since: number; lastLogAt: number }>();

  constructor(
    clusterKey: Buffer,
    private readonly log?: SignerLog,
    private readonly now: () => number = () => Date.now(),
  ) {
    if (clusterKey.length < 32) throw new RangeError('the cluster key must be at least 32 bytes');
    // A key of its own for messages (the cluster key also seals secrets at rest, lib/secret-box.ts).
    // eslint-disable-next-line no-restricted-syntax -- start-up only: one derivation when the node opens NATS
    this.key = Buffer.from(crypto.hkdfSync('sha256', clusterKey, Buffer.alloc(0), 'algohost cluster messages v1', 32));
    this.rotatedAt = this.now();
  }

  /**
   * The message to publish on `subject` (with `reply` as its reply subject, '' for none): the
   * signed head, then `payload`. `nonce` is what an answer to it is bound to.
   */
  sign(
    purpose: MessagePurpose,
    subject: string,
    reply: string,
    payload: Uint8Array,
    boundTo?: Uint8Array,
  ): { data: Buffer; nonce: Buffer } {
    const data = Buffer.allocUnsafe(SIGNED_HEAD_BYTES + payload.length);
    data[0] = VERSION;
    data.writeDoubleBE(this.now(), AT);
    this.noncePrefix.copy(data, NONCE);
    data.writeUInt32BE(this.counter >>> 0, NONCE + 8);
    data.writeUInt32BE(Math.floor(this.counter / 0x1_0000_0000), NONCE + 12);
    this.counter++;
    data.set(payload, SIGNED_HEAD_BYTES);
    this.mac(purpose, subject, reply, boundTo, data).copy(data, MAC);
    return { data, nonce: data.subarray(NONCE, MAC) };
  }

  /**
   * The payload of a message heard on `subject` with reply subject `reply` ('' for none), once
   * it verifies; throws MessageRefused otherwise (the caller drops the message).
   */
  open(purpose: MessagePurpose, subject: string, reply: string, data: Uint8Array, o: OpenOptions = {}): { payload: Buffer; nonce: Buffer } {
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (buf.length < SIGNED_HEAD_BYTES || buf[0] !== VERSION) throw this.refused(purpose, subject, 'it is not signed');
    const issuedAt = buf.readDoubleBE(AT);
    const now = this.now();
    if (o.windowMs !== undefined && !(Math.abs(now - issuedAt) <= o.windowMs)) {
      throw this.refused(purpose, subject, `it was issued ${Math.round((now - issuedAt) / 1000)} s ago, outside the window`);
    }
    const expected = this.mac(purpose, subject, reply, o.boundTo, buf);
    if (!crypto.timingSafeEqual(expected, buf.subarray(MAC, SIGNED_HEAD_BYTES))) {
      throw this.refused(purpose, subject, 'its MAC does not verify under the cluster key');
    }
    const nonce = buf.subarray(NONCE, MAC);
    // Only after the MAC verified: a forger cannot fill this memory.
    if (o.once && !this.firstSighting(nonce.toString('latin1'), now)) throw this.refused(purpose, subject, 'it was seen before (a replay)');
    return { payload: buf.subarray(SIGNED_HEAD_BYTES), nonce };
  }

  private mac(purpose: MessagePurpose, subject: string, reply: string, boundTo: Uint8Array | undefined, data: Buffer): Buffer {
    // Each text as its length and itself: no two different tuples encode the same.
    const bound = boundTo ? Buffer.from(boundTo.buffer, boundTo.byteOffset, boundTo.byteLength).toString('hex') : '';
    const head = `${purpose.length}:${purpose}${subject.length}:${subject}${reply.length}:${reply}${bound.length}:${bound}`;
    return crypto
      .createHmac('sha256', this.key)
      .update(head)
      .update(data.subarray(0, MAC))
      .update(data.subarray(SIGNED_HEAD_BYTES))
      .digest();
  }

  private firstSighting(nonce: string, now: number): boolean {
    if (now - this.rotatedAt >= MESSAGE_WINDOW_MS) {
      // Rotated by whole windows: after a long quiet spell every generation is dropped at once.
      const steps = Math.min(3, Math.floor((now - this.rotatedAt) / MESSAGE_WINDOW_MS));
      for (let i = 0; i < steps; i++) this.generations = [new Set(), this.generations[0]!, this.generations[1]!];
      this.rotatedAt = now;
    }
    for (const g of this.generations) if (g.has(nonce)) return false;
    this.generations[0]!.add(nonce);
    return true;
  }

  /** The refusal to throw; logged at most every ten seconds per purpose, with how many were dropped meanwhile. */
  private refused(purpose: MessagePurpose, subject: string, why: string): MessageRefused {
    const err = new MessageRefused(`a ${purpose} message on ${subject} was dropped: ${why}`);
    let r = this.refusals.get(purpose);
    if (!r) this.refusals.set(purpose, (r = { since: 0, lastLogAt: -Infinity }));
    r.since++;
    const now = this.now();
    if (this.log && now - r.lastLogAt >= 10_000) {
      this.log.warn(
        { subject, purpose, dropped: r.since },
        `${err.message} (messages not made by a node of this cluster, or sent again, are ignored)`,
      );
      r.lastLogAt = now;
      r.since = 0;
    }
    return err;
  }
}
