/**
 * Whether a node's NATS connection is up, from the client's status events. The connection
 * reconnects by itself when nats-server restarts (nats-cluster.ts connectNode); what this adds is
 * what a node does about it: an API node refuses a sync call at once while the connection is
 * down (a 503 saying to call again, not a request that waits in the client's buffer), ends the
 * calls it was waiting on when it went down, and reads the workers' entries again once it is
 * back; a worker announces itself again as soon as it is back, so that API nodes route to it at
 * once rather than on its next renewal.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Errors } from '../domain/errors.js';

/** What a sync call is told while this node cannot reach nats-server. */
export const BUS_UNREACHABLE = "the cluster's message bus (NATS) cannot be reached from this node; call again in a moment";

export class NatsLink {
  private up = true;
  private readonly onUp = new Set<() => void>();
  private readonly onDown = new Set<() => void>();
  /** When the connection last came back (ms, monotonic clock); -Infinity before any reconnection. */
  private backAt = -Infinity;

  constructor(
    nc: NatsConnection,
    private readonly now: () => number = () => performance.now(),
  ) {
    void this.follow(nc);
  }

  get connected(): boolean {
    return this.up;
  }

  /** Milliseconds since the connection came back (Infinity when it never went down). */
  sinceReconnect(): number {
    return this.now() - this.backAt;
  }

  /** Runs `fn` each time the connection comes back (its subscriptions are made again by then). */
  onReconnect(fn: () => void): void {
    this.onUp.add(fn);
  }

  /** Runs `fn` each time the connection is lost. */
  onDisconnect(fn: () => void): void {
    this.onDown.add(fn);
  }

  /**
   * Resolves once connected: at once when it is, else when it comes back within `waitMs` (a call
   * made just as nats-server restarted, before the client's next try); throws the 503 otherwise.
   */
  async ready(waitMs: number): Promise<void> {
    if (this.up) return;
    let done: () => void = () => {};
    const back = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), waitMs);
      done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.onUp.add(done);
    });
    const ok = await back;
    this.onUp.delete(done);
    if (!ok) throw Errors.unavailable(BUS_UNREACHABLE);
  }

  private async follow(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' && this.up) {
        this.up = false;
        for (const fn of [...this.onDown]) fn();
      } else if (s.type === 'reconnect') {
        this.up = true;
        this.backAt = this.now();
        for (const fn of [...this.onUp]) fn();
      }
    }
  }
}
