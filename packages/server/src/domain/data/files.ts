/**
 * The bytes of hosted files: streamed uploads under the per-account quota, reads that survive a
 * concurrent replace, and deleting blobs no record names any more.
 */
import crypto from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { type Clock, isoNow } from '../clock.js';
import { Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import type { FileRecord, Space } from './model.js';
import { missing, type Place } from './places.js';
import type { BlobStore, DataStore } from './ports.js';
import { QuotaReservation } from './quota-reservation.js';

export interface FileContent {
  size: number;
  lastModified: string;
  body: Readable;
}

export class DataFiles {
  constructor(
    private readonly store: DataStore,
    private readonly blobs: BlobStore,
    /** Bytes each account may store; 0 = unlimited. */
    private readonly quotaBytes: number,
    private readonly clock: Clock,
    /** Sessions that stored something through this node (DataService says why). */
    private readonly sessionsWithData: Set<string>,
    private readonly log: Logger,
  ) {}

  /** Opens the file's blob; a replace racing with the read is retried once with the new blob. */
  async open(place: Place, file: FileRecord): Promise<FileContent> {
    let current: FileRecord | undefined = file;
    for (let attempt = 0; attempt < 2 && current; attempt++) {
      const blob = await this.blobs.get(current.blobKey);
      if (blob) return { size: blob.size, lastModified: current.lastModified, body: blob.body };
      current = await this.store.findFile(place.space, file.folder, file.name);
    }
    throw missing(place);
  }

  /**
   * Streams `body` into the file `name` of `folder`, replacing it only once the whole body is
   * stored. The quota is checked against the declared length first and enforced on the bytes as
   * they come.
   */
  async write(space: Space, folder: string, name: string, body: Readable, declaredLength?: number): Promise<void> {
    const existing = await this.store.findFile(space, folder, name);
    const quota = this.quotaBytes;
    const reservation =
      quota > 0 ? new QuotaReservation(this.store, this.clock, space.accountId, quota, existing?.size ?? 0) : undefined;
    let committed = false;
    try {
      // The declared length is reserved before a byte is read; a body without one (chunked)
      // reserves as it comes.
      if (reservation && declaredLength !== undefined) await reservation.cover(declaredLength, declaredLength);
      if (space.kind === 'session') this.sessionsWithData.add(space.id);
      const key = `data/${space.kind}/${space.id}/${crypto.randomUUID()}`;
      const stored = await this.blobs.put(key, limited(body, reservation));
      let replaced: string | undefined;
      try {
        replaced = await this.store.upsertFile(
          { space, accountId: space.accountId, folder, name, size: stored.size, lastModified: isoNow(this.clock), blobKey: key },
          reservation?.id,
        );
        committed = true;
      } catch (err) {
        await this.discard(key);
        throw err;
      }
      // Each upload has its own blob, so a replace never touches the bytes a reader is streaming.
      // The blob replaced is the one the commit found (another upload may have replaced
      // `existing` meanwhile).
      if (replaced) await this.discard(replaced);
    } finally {
      if (!committed) await this.releaseQuietly(reservation);
    }
  }

  /** Deletes a blob no record names any more; a failure leaves garbage for the collector, not an error. */
  async discard(key: string): Promise<void> {
    try {
      await this.blobs.delete(key);
    } catch (err) {
      this.log.warn({ err, blob: key }, 'could not delete a blob; the garbage collection of the data sweep retries');
    }
  }

  /** Gives back an upload's reserved bytes; on failure the reservation goes stale and the sweep deletes it. */
  private async releaseQuietly(reservation: QuotaReservation | undefined): Promise<void> {
    try {
      await reservation?.release();
    } catch (err) {
      this.log.warn({ err, reservation: reservation?.id }, 'could not release a quota reservation; it lapses by itself');
    }
  }
}

/**
 * The body as the blob store sees it: upload errors (a dropped connection) become errors of
 * this stream, and past `allowance` bytes it fails with the quota error. The body is piped, not
 * pipelined, so that a refusal here leaves the request itself to the HTTP layer (which drains it
 * and answers).
 */
function limited(body: Readable, reservation: QuotaReservation | undefined): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      seen += chunk.length;
      if (!reservation) return done(null, chunk);
      // Bytes pass on only once reserved: the blob store never holds bytes past the quota.
      reservation.cover(seen).then(() => done(null, chunk), done);
    },
  });
  const interrupted = (err?: Error) => {
    if (counter.destroyed) return;
    counter.destroy(Errors.uploadInterrupted({ reason: err?.message }));
  };
  body.once('error', interrupted);
  body.once('close', () => {
    if (!body.readableEnded) interrupted();
  });
  body.pipe(counter);
  return counter;
}
