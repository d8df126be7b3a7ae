/**
 * What a node knows of the cluster's workers: their presence entries in the `<prefix>_workers`
 * KV bucket (docs/design/cluster.md), kept in memory from a watch of the bucket, plus what each
 * worker's answers to sync calls say of its load since its last entry. An API node routes every
 * sync call from this view (NatsRuntime) and asks it whether a GPU worker exists (builds and
 * async calls of GPU environments wait for one).
 *
 * A worker is live while its entry is younger than PRESENCE_TTL_MS: it renews it every few
 * seconds, so a worker that stopped without a goodbye (SIGSTOP, a frozen machine, a cut cable)
 * falls out of the view within the TTL, even though its NATS connection and subscriptions live
 * on until nats-server's ping timeout (minutes). A worker that left cleanly deletes its entry.
 * The bucket's own expiry of an entry (max age) sends no notification, hence the clock here.
 *
 * An entry counts only when it is signed under the cluster key for its own key in the bucket
 * (cluster/signed-messages.ts) and was issued within the TTL: an entry of anyone else's making
 * (a fake worker that would receive calls) or a worker's entry copied under another name is
 * ignored as if it were not there.
 */
import { type KvEntry, KvWatchInclude } from '@nats-io/kv';
import type { ConsumerStatus } from '../domain/events/model.js';
import { type NatsCluster, PRESENCE_TTL_MS } from './nats-cluster.js';
import { MESSAGE_WINDOW_MS } from './signed-messages.js';

/** How long after a watch ended (nats-server away or restarting) a new one is tried. */
const WATCH_RETRY_MS = 250;

/** What the MAC of a presence entry binds it to: its key in this cluster's bucket. */
const presenceSubject = (cluster: NatsCluster, key: string) => `${cluster.names.workersBucket}.${key}`;

/** A worker's presence entry as written to the bucket under its id: signed. */
export function signPresence(cluster: NatsCluster, entry: PresenceEntry): Uint8Array {
  return cluster.signer.sign('presence', presenceSubject(cluster, entry.id), '', Buffer.from(JSON.stringify(entry))).data;
}

/** A worker's presence entry (cluster/worker.ts writes it). */
export interface PresenceEntry {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  /** Set by ALGOHOST_WORKER_GPU: GPU environments are routed to this worker only when true. */
  gpu: boolean;
  /** Warm runners plus sync calls running: what routing compares. */
  load: number;
  warmRunners: number;
  callsInFlight: number;
  /** The artifacts it has warm runners of, as subject tokens (artifactToken). */
  warm: string[];
  /** What its subscriber flows report, by flow id. */
  flows: Record<string, ConsumerStatus>;
  /** Increases with every report of this worker (entry or call answer): the newest wins. */
  seq: number;
}

/** The load a worker reports with each answer to a sync call (newer than its last entry). */
export interface LoadReport {
  id: string;
  seq: number;
  load: number;
}

interface Known {
  entry: PresenceEntry;
  /** When this node last heard the worker's entry (ms, this node's monotonic clock). */
  seenAt: number;
  /** Sync calls this node sent to it that have not been answered. */
  sent: number;
  /** Set when a call to it went unanswered: left out until it reports again. */
  silentSince: number | null;
}

export class WorkerDirectory {
  private readonly workers = new Map<string, Known>();
  /** The bucket's watch while one runs. */
  private watch: { stop(): void } | undefined;
  /** Calls waiting to hear an entry (heard()). */
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly cluster: NatsCluster,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Reads the bucket, then follows its changes while the connection lasts. */
  async start(): Promise<void> {
    try {
      await this.refresh();
    } catch {
      // NATS slow to answer (a loaded server, one restarting): not a reason to refuse to start.
      // Workers renew their entries every few seconds, which the watch below sees, and a call
      // that finds no worker reads the bucket again.
    }
    // After nats-server restarted, the watch may have missed entries (and the server's consumer
    // behind it is gone): a new one, which reads every entry first, replaces it at once.
    this.cluster.link.onReconnect(() => this.watch?.stop());
    void this.follow();
  }

  /**
   * Reads every entry of the bucket again: at start, and when a call finds no worker (a worker
   * that joined a moment ago, or a watch that missed entries while NATS restarted).
   */
  async refresh(): Promise<void> {
    for await (const key of await this.cluster.workers.keys()) {
      const e = await this.cluster.workers.get(key);
      if (e) this.apply(e, ageOf(e));
    }
  }

  /**
   * Resolves when an entry is heard (a worker announced itself), or after `ms`: a call made just
   * after NATS came back waits for the workers' new entries rather than finding none.
   */
  heard(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.listeners.add(done);
    });
  }

  /** Follows the bucket; a watch that ends (an error, a reconnection) is made again, until the connection closes. */
  private async follow(): Promise<void> {
    // At start the bucket was just read; a watch made again reads every entry too (those
    // written while none followed).
    let include: KvWatchInclude = KvWatchInclude.UpdatesOnly;
    while (!this.cluster.nc.isClosed()) {
      try {
        const watch = await this.cluster.workers.watch({ include });
        this.watch = watch;
        include = KvWatchInclude.LastValue;
        for await (const e of watch) this.apply(e, e.isUpdate ? 0 : ageOf(e));
      } catch {
        // Retried below: the entries renew every few seconds, so nothing is missed for long.
      }
      if (!this.cluster.nc.isClosed()) await new Promise((r) => setTimeout(r, WATCH_RETRY_MS));
    }
  }

  private apply(e: KvEntry, ageMs: number): void {
    if (e.operation !== 'PUT') {
      this.workers.delete(e.key);
      return;
    }
    let entry: PresenceEntry;
    try {
      const { payload } = this.cluster.signer.open('presence', presenceSubject(this.cluster, e.key), '', e.value, {
        windowMs: PRESENCE_TTL_MS + MESSAGE_WINDOW_MS,
      });
      entry = JSON.parse(payload.toString('utf8')) as PresenceEntry;
      // Signed for this key; its id is what calls are sent to, so it must be the key.
      if (entry.id !== e.key) return;
    } catch {
      return;
    }
    // A worker's user may write only keys that start with its own name (docs/cluster.md §3): an
    // entry naming another worker's id under its key would send that worker's calls elsewhere.
    if (entry.id !== e.key) return;
    const known = this.workers.get(e.key);
    const seenAt = this.now() - ageMs;
    if (known && known.entry.seq > entry.seq && known.entry.startedAt === entry.startedAt) {
      // An answer told us more recent figures: keep them, but the worker is alive now.
      known.seenAt = Math.max(known.seenAt, seenAt);
      known.silentSince = null;
      return;
    }
    this.workers.set(e.key, { entry, seenAt, sent: known?.sent ?? 0, silentSince: null });
    for (const fn of [...this.listeners]) fn();
  }

  /** The live workers (renewed within the TTL and not gone silent on a call). */
  live(): PresenceEntry[] {
    return [...this.liveKnown()].map((k) => k.entry);
  }

  private *liveKnown(): Iterable<Known> {
    const oldest = this.oldestLive();
    for (const k of this.workers.values()) if (isLive(k, oldest)) yield k;
  }

  /** Entries last seen before this are gone. */
  private oldestLive(): number {
    return this.now() - PRESENCE_TTL_MS;
  }

  hasGpuWorker(): boolean {
    for (const k of this.liveKnown()) if (k.entry.gpu) return true;
    return false;
  }

  /**
   * Where a sync call of the artifact goes: among the live workers that may run it (a GPU one
   * when `gpu`), the least loaded of those that have it warm, else the least loaded of all (it
   * starts a runner there). Loads count this node's unanswered calls to each worker; ties go to
   * a random one, so several API nodes do not all pick the same worker.
   */
  pick(artifactToken: string, gpu: boolean, skip: ReadonlySet<string>): PresenceEntry | undefined {
    let best: Known[] = [];
    let bestScore = Infinity;
    let bestWarm = false;
    // A plain loop, not liveKnown(): this runs on every call, and a generator costs more.
    const oldest = this.oldestLive();
    for (const k of this.workers.values()) {
      if (!isLive(k, oldest)) continue;
      if ((gpu && !k.entry.gpu) || skip.has(k.entry.id)) continue;
      const warm = k.entry.warm.includes(artifactToken);
      if (bestWarm && !warm) continue;
      const score = k.entry.load + k.sent;
      if ((warm && !bestWarm) || score < bestScore) {
        best = [k];
        bestScore = score;
        bestWarm = warm;
      } else if (score === bestScore) best.push(k);
    }
    if (!best.length) return undefined;
    return best[Math.floor(Math.random() * best.length)]!.entry;
  }

  /** A call goes to `id`: counted in its load until answered. */
  sending(id: string): void {
    const k = this.workers.get(id);
    if (k) k.sent++;
  }

  /** The worker answered (`report` set) or the call ended without an answer. */
  answered(id: string, artifactToken: string, report?: LoadReport): void {
    const k = this.workers.get(id);
    if (!k) return;
    k.sent = Math.max(0, k.sent - 1);
    if (!report || report.seq <= k.entry.seq) return;
    // It ran the call: it has the artifact warm now, and its load is this. Updated in place (the
    // entry is this node's own copy), as this runs on every call.
    if (!k.entry.warm.includes(artifactToken)) k.entry.warm = [...k.entry.warm, artifactToken];
    k.entry.load = report.load;
    k.entry.seq = report.seq;
    k.silentSince = null;
  }

  /** A call to `id` went unanswered (nobody subscribed, or silence): no more calls until it reports again. */
  silent(id: string): void {
    const k = this.workers.get(id);
    if (k && k.silentSince === null) k.silentSince = this.now();
  }

  /**
   * What the subscriber flow reports, across the live workers (each runs a consumer of it): running
   * when one runs, else the first other state; the lag is the largest reported.
   */
  flowStatus(flowId: string): ConsumerStatus | undefined {
    let status: ConsumerStatus | undefined;
    for (const w of this.live()) {
      const s = w.flows?.[flowId];
      if (!s) continue;
      if (!status || (status.state !== 'running' && s.state === 'running')) status = { ...s };
      if (s.lag !== null && (status.lag === null || s.lag > status.lag)) status.lag = s.lag;
    }
    return status;
  }
}

/** An entry's age by the server's timestamp: one read now may have been written long ago. */
function ageOf(e: KvEntry): number {
  return Math.max(0, Date.now() - e.created.getTime());
}

/** Renewed within the TTL (entries seen at `oldest` or later) and not gone silent on a call. */
function isLive(k: Known, oldest: number): boolean {
  return k.seenAt >= oldest && k.silentSince === null;
}
