/**
 * The endpoints the UI needs that the typed client does not have methods for yet (they arrive
 * with the server's UI-support work: whoami, public search, commits, README, cluster status).
 * Each goes through the client's own transport, so errors and auth behave like every other call.
 */
import type { Algorithm, AlgohostClient, Page } from '@algohost/client';

export interface WhoAmI {
  username: string;
  admin: boolean;
  credential: 'session' | 'key' | 'admin_key' | 'call_key';
  capabilities: string[];
  /** The organizations the account belongs to (absent for a call key). */
  organizations?: { name: string; role: 'owner' | 'member' }[];
}

export interface Commit {
  sha: string;
  author_name: string;
  message: string;
  committed_at: string;
}

export interface Readme {
  commit: string;
  path: string;
  content: string;
  truncated?: boolean;
}

export interface AdminStatus {
  version: string;
  database: string;
  blob_store: string;
  builds: { queued: number; running: number };
  runners: { warm: number };
  calls_per_minute: number;
  uptime_seconds: number;
}

const seg = encodeURIComponent;

export function whoami(c: AlgohostClient): Promise<WhoAmI> {
  return c.transport.json('GET', '/v1/auth/whoami');
}

export function searchAlgorithms(c: AlgohostClient, opts: { query?: string; limit?: number; marker?: string }): Promise<Page<Algorithm>> {
  return c.transport.json('GET', '/v1/algorithms', { query: { query: opts.query || undefined, limit: opts.limit, marker: opts.marker } });
}

export function algorithmCommits(
  c: AlgohostClient,
  owner: string,
  name: string,
  opts: { limit?: number } = {},
): Promise<{ results: Commit[] }> {
  return c.transport.json('GET', `/v1/algorithms/${seg(owner)}/${seg(name)}/source/commits`, { query: { limit: opts.limit } });
}

export function algorithmReadme(c: AlgohostClient, owner: string, name: string, opts: { ref?: string } = {}): Promise<Readme> {
  return c.transport.json('GET', `/v1/algorithms/${seg(owner)}/${seg(name)}/source/readme`, { query: { ref: opts.ref } });
}

export function adminStatus(c: AlgohostClient): Promise<AdminStatus> {
  return c.transport.json('GET', '/v1/admin/status');
}
