import type { Environment } from '../catalog/model.js';

export const LICENSES = ['apl', 'apache2', 'gpl3', 'mit'] as const;
export const SOURCE_VISIBILITIES = ['open', 'closed'] as const;
export const CALLABILITIES = ['private', 'public'] as const;
export const NETWORK_ACCESS = ['isolated', 'full'] as const;

export interface AlgorithmSettings {
  algorithmCallability: (typeof CALLABILITIES)[number];
  sourceVisibility: (typeof SOURCE_VISIBILITIES)[number];
  license: (typeof LICENSES)[number];
  royaltyMicrocredits: number;
  networkAccess: (typeof NETWORK_ACCESS)[number];
  pipelineEnabled: boolean;
  insightsEnabled: boolean;
  environmentName: string;
}

export interface Algorithm {
  id: string;
  ownerId: string;
  ownerName: string;
  name: string;
  details: { label: string | null; summary: string | null; tagline: string | null };
  settings: AlgorithmSettings;
  createdAt: string;
  updatedAt: string;
}

/** One commit of an algorithm's history, as the commit list shows it. */
export interface CommitSummary {
  sha: string;
  authorName: string;
  /** The subject: the message's first line (git joins a first paragraph wrapped over lines). */
  message: string;
  /** ISO 8601, UTC. */
  committedAt: string;
}

/** A file read from the root of a commit's tree, at most a bounded number of bytes of it. */
export interface SourceFile {
  /** Its name in the tree, as spelled there. */
  path: string;
  content: string;
  /** Set when the blob was longer than the bytes read. */
  truncated: boolean;
}

/** The request shape of docs/compatibility.md §9.2 endpoint 2 and of PUT/PATCH (docs/compatibility.md §3); all fields optional here. */
export interface AlgorithmInput {
  name?: unknown;
  details?: { label?: unknown; summary?: unknown; tagline?: unknown } | null;
  settings?: Record<string, unknown> | null;
  source?: Record<string, unknown> | null;
}

/** An algorithm and the environment it runs in: what the areas built on algorithms read of one. */
export interface AlgorithmRecord {
  algorithm: Algorithm;
  environment: Environment;
}
