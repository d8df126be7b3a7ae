/**
 * The audit log of administrative and security-relevant actions: who (account and credential,
 * from which address) did what (the operation's dotted name) to what (the request's path), with
 * what outcome (the HTTP status) and the request's settings (secrets left out). The HTTP edge
 * records the operations it names as audited (api/audit.ts); only admins read the log.
 *
 * Sign-ins are recorded apart (recordSignIn), since anyone may send them by the thousand:
 * - the name tried is never kept as typed (a password typed into the wrong field would be): an
 *   existing account is recorded by its id and name, any other name by a keyed hash
 *   (`details.name_hash`, the same for the same name, so repeated tries still show);
 * - a success is one entry each; failed, throttled and rate-limited attempts are aggregated: one
 *   entry per name, client and outcome per window (`details.attempts` counts them), and at most
 *   SignInAuditSettings.rowsPerSubject such entries per account (and for all unknown names
 *   together) per window; past it, one more per outcome counts the rest without a client;
 * - the sweep keeps at most `MAX_ANONYMOUS_ENTRIES` entries of no account, whatever the retention.
 */
import crypto from 'node:crypto';
import type { Clock } from '../clock.js';
import { requireAdmin, type Principal } from '../accounts/principal.js';
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

/** One sign-in attempt as the HTTP edge saw it. */
export interface SignInAttempt {
  /** The username field as sent (any JSON value, or undefined before the body was read); never stored. */
  username: unknown;
  status: number;
  target: string;
  /** The client address (none on a sandbox's API socket). */
  address: string | null;
  /** What the attempt is charged to: the address (IPv6: its /64) or a sandbox's owner. */
  client: string;
  /** A sandbox's API socket: whose sandbox (`details.sandbox`). */
  sandbox?: string;
}

export interface SignInAuditSettings {
  /** Finds the account a name belongs to (any letter case). */
  accounts: { findByName(name: string): Promise<{ id: string; name: string } | undefined> };
  /** The key of the names' hashes: one per cluster (so every node hashes a name alike), kept from the log's readers. */
  nameHashKey: () => Promise<string>;
  /** Length of an aggregation window, in ms. */
  windowMs: number;
  /** Aggregated entries per account (and for all unknown names together) per window. */
  rowsPerSubject: number;
}

/** Defaults: ten-minute windows, 20 entries per account and window. */
export const SIGN_IN_AUDIT_DEFAULTS = { windowMs: 10 * 60 * 1000, rowsPerSubject: 20 } as const;

/**
 * Entries of no account (sign-in attempts of unknown names) kept at most, the newest: with the
 * aggregation above about 3,000 are written a day at most, so this is a month of a steady flood.
 */
const MAX_ANONYMOUS_ENTRIES = 100_000;

/** An aggregated entry of the current window. */
interface OpenEntry {
  entry: AuditEntry;
  attempts: number;
  /** Attempts the stored entry shows. */
  written: number;
  /** Its first write; later ones wait for it. */
  appended: Promise<void>;
}

interface SignInWindow {
  index: number;
  entries: Map<string, OpenEntry>;
  /** Entries opened per subject (an account id, or `anonymous`). */
  perSubject: Map<string, number>;
}

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
  /** Replaces an entry's details (an aggregated entry's count). */
  updateDetails(id: string, details: Record<string, unknown>): Promise<void>;
  /** Deletes the entries of no account (`actorId` null) but the newest `keep`; resolves with how many. */
  deleteAnonymousBeyond(keep: number): Promise<number>;
}

/** Action filters are dotted names: letters and dots (the operation ids). */
export const ACTION_FILTER_PATTERN = '^[A-Za-z]+(?:\\.[A-Za-z]+)*$';

export class AuditService {
  private lastMs = 0;
  private sequence = 0;
  private window: SignInWindow = { index: -1, entries: new Map(), perSubject: new Map() };

  constructor(
    private readonly store: AuditStore,
    private readonly clock: Clock,
    /** Unset: sign-ins are recorded as they come, with no account looked up (unit tests of the store). */
    private readonly signIns?: SignInAuditSettings,
  ) {}

  async record(entry: NewAuditEntry): Promise<void> {
    await this.store.append(this.stamped(entry));
  }

  private stamped(entry: NewAuditEntry): AuditEntry {
    const now = this.clock();
    return { id: this.nextId(now.getTime()), at: now.toISOString(), ...entry };
  }

  /** Records a sign-in attempt (see the top of this file). */
  async recordSignIn(a: SignInAttempt): Promise<void> {
    const who = await this.subjectOf(a.username);
    const entry: NewAuditEntry = {
      actor: who.actor,
      actorId: who.actorId,
      credential: 'password',
      action: 'session.create',
      target: a.target,
      status: a.status,
      address: a.address,
      details: {
        ...(who.nameHash !== undefined ? { name_hash: who.nameHash } : {}),
        ...(a.sandbox !== undefined ? { sandbox: a.sandbox } : {}),
      },
    };
    const s = this.signIns;
    if (!s || (a.status >= 200 && a.status < 300)) return this.record(entry);

    const w = this.currentWindow(s.windowMs);
    const subject = who.actorId ?? 'anonymous';
    let key = `${who.actorId ?? who.nameHash ?? '-'}|${a.client}|${a.status}`;
    let open = w.entries.get(key);
    if (!open) {
      const opened = w.perSubject.get(subject) ?? 0;
      if (opened >= s.rowsPerSubject) {
        // Past the cap: the rest of this subject's attempts in the window, whatever the client.
        key = `${subject}|*|${a.status}`;
        open = w.entries.get(key);
        if (!open) {
          const rest = { ...entry, address: null, details: { rest_of_window: true } };
          if (who.actorId === null) rest.actor = null;
          open = this.open(w, key, rest);
        }
      } else {
        w.perSubject.set(subject, opened + 1);
        open = this.open(w, key, entry);
      }
    }
    open.attempts += 1;
    await open.appended;
  }

  /** Writes the counts of aggregated sign-in entries that grew since they were written. */
  async flushSignIns(): Promise<void> {
    await this.flush(this.window);
  }

  private currentWindow(windowMs: number): SignInWindow {
    const index = Math.floor(this.clock().getTime() / windowMs);
    if (index !== this.window.index) {
      const closed = this.window;
      this.window = { index, entries: new Map(), perSubject: new Map() };
      // The closed window's last counts, written in the background: a failure (the database
      // away) leaves those entries' counts lower, never an attempt unrecorded.
      void this.flush(closed).catch(() => {});
    }
    return this.window;
  }

  private open(w: SignInWindow, key: string, e: NewAuditEntry): OpenEntry {
    const entry = this.stamped({ ...e, details: { ...e.details, attempts: 1 } });
    const open: OpenEntry = { entry, attempts: 0, written: 1, appended: this.store.append(entry) };
    w.entries.set(key, open);
    return open;
  }

  private async flush(w: SignInWindow): Promise<void> {
    for (const open of w.entries.values()) {
      if (open.attempts === open.written) continue;
      await open.appended;
      const attempts = open.attempts;
      await this.store.updateDetails(open.entry.id, { ...open.entry.details, attempts });
      open.written = attempts;
    }
  }

  /** Who a sign-in names: an account (by id and its own name), or a keyed hash of what was typed. */
  private async subjectOf(username: unknown): Promise<{ actor: string | null; actorId: string | null; nameHash?: string }> {
    if (typeof username !== 'string') return { actor: null, actorId: null };
    const account = this.signIns ? await this.signIns.accounts.findByName(username) : undefined;
    if (account) return { actor: account.name, actorId: account.id };
    const key = this.signIns ? await this.signIns.nameHashKey() : '';
    const nameHash = crypto.createHmac('sha256', key).update(username.toLowerCase()).digest('hex').slice(0, 32);
    return { actor: null, actorId: null, nameHash };
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

  /**
   * Deletes the entries older than `keepMs` (the operator's retention; 0 = none) and the entries
   * of no account past the newest MAX_ANONYMOUS_ENTRIES; resolves with how many.
   */
  async sweep(keepMs: number, maxAnonymous = MAX_ANONYMOUS_ENTRIES): Promise<number> {
    const old = keepMs > 0 ? await this.store.deleteBefore(new Date(this.clock().getTime() - keepMs).toISOString()) : 0;
    return old + (await this.store.deleteAnonymousBeyond(maxAnonymous));
  }

  async list(p: Principal, filter: AuditFilter): Promise<Page<AuditEntry>> {
    requireAdmin(p, 'reading the audit log');
    if (filter.action !== undefined && !new RegExp(ACTION_FILTER_PATTERN).test(filter.action)) {
      throw invalid(`action must be an operation name like key.create or a dotted prefix like key, not "${filter.action}"`);
    }
    return this.store.list(filter);
  }
}
