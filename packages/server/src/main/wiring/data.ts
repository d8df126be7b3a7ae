/** Hosted data: the data service over the blob store (main/blob-store.ts). */
import { DataService } from '../../domain/data/data-service.js';
import type { BlobStore } from '../../domain/data/ports.js';
import { SqlDataStore } from '../../storage/data-store.js';
import type { Base } from './base.js';

export function wireData(base: Base, blobs: BlobStore): DataService {
  const { config } = base;
  const data = new DataService({
    store: new SqlDataStore(base.db),
    blobs,
    accounts: base.accounts,
    algorithms: base.algorithmStore,
    access: base.access,
    settings: {
      quotaBytes: config.dataQuotaBytes,
      tempTtlMs: config.dataTempTtlSeconds * 1000,
    },
    clock: base.clock,
    log: base.log,
  });
  // A request tree's temporary data goes when it ends.
  base.changes.on('call_session_ended', ({ session }) => data.sessionEnded(session));
  return data;
}
