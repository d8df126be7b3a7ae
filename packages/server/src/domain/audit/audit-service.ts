/**
 * The audit log of administrative and security-relevant actions: who (account and credential,
 * from which address) did what (the operation's dotted name) to what (the request's path), with
 * what outcome (the HTTP status) and the request's settings (secrets left out). The HTTP edge
 * records the operations it names as audited (api/audit.ts); only admins read the log.
 */
import crypto from 'node:crypto';
import type { Clock } from '../clock.js';
import { requireAdmin, type Principal } from '../auth/principal.js';
import type { Page, PageRequest } from '../pagination.js';
import { invalid } from '../errors.js';

export interface AuditEntry {
  id: string;
  at: string;
  /** The account that acted (as named then); for a sign-in, the name tried; null if unknown. */
  actor: string | null;
  actorId: string | null;
  /** admin_key, key, session, call_key, or password (a sign-in); null when none was valid. */
  credential: string | null;
  action: string;
  target: string;
  status: number;
  address: string | null;
  details: Record<string, unknown>;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'>;

export interface AuditFilter {
  actor?: string;
  /** An action (`key.create`), or a dotted prefix of actions (`key`, `organization.members`). */
  action?: string;
  page: PageRequest;
}

/** The port: where entries are kept. */
export interface AuditStore {
  append(entry: AuditEntry): Promise<void>;
  list(filter: AuditFilter): Promise<Page<AuditEntry>>;
  /** Deletes the entries written before `iso`; resolves with how many. */
  deleteBefore(iso: string): Promise<number>;
}

/** Action filters are dotted names: letters and dots (the operation ids). */
export const ACTION_FILTER_PATTERN = '^[A-Za-z]+(?:\\.[A-Za-z]+)*$';

export class AuditService {
  private lastMs = 0;
  private sequence = 0;

  constructor(
    private readonly store: AuditStore,
    private readonly clock: Clock,
  ) {}

  async record(entry: NewAuditEntry): Promise<void> {
    const now = this.clock();
    await this.store.append({ id: this.nextId(now.getTime()), at: now.toISOString(), ...entry });
  }

  /**
   * A UUIDv7 (RFC 9562: milliseconds, then a counter, then random bits): entries of one node
   * written in the same millisecond still list in the order they happened (the log sorts by
   * time, then id).
   */
  private nextId(ms: number): string {
    if (ms <= this.lastMs) {
      this.sequence += 1;
      ms = this.lastMs;
    } else {
      this.lastMs = ms;
      this.sequence = 0;
    }
    const bytes = crypto.randomBytes(16);
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | ((this.sequence >> 8) & 0x0f);
    bytes[7] = this.sequence & 0xff;
    bytes[8] = 0x80 | (bytes[8]! & 0x3f);
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** Deletes the entries older than `keepMs` (the operator's retention); resolves with how many. */
  deleteOlderThan(keepMs: number): Promise<number> {
    return this.store.deleteBefore(new Date(this.clock().getTime() - keepMs).toISOString());
  }

  async list(p: Principal, filter: AuditFilter): Promise<Page<AuditEntry>> {
    requireAdmin(p, 'reading the audit log');
    if (filter.action !== undefined && !new RegExp(ACTION_FILTER_PATTERN).test(filter.action)) {
      throw invalid(`action must be an operation name like key.create or a dotted prefix like key, not "${filter.action}"`);
    }
    return this.store.list(filter);
  }
}
