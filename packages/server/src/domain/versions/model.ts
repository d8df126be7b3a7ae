import type { SemVer } from './semver.js';

/** A published version: one successful build frozen under a semantic version number. */
export interface Version extends SemVer {
  id: string; // version_uuid
  algorithmId: string;
  buildId: string;
  commitSha: string;
  environmentName: string;
  artifact: string;
  semanticVersion: string;
  algorithmCallability: 'private' | 'public';
  insightsEnabled: boolean;
  releaseNotes: string | null;
  sampleInput: string | null;
  sampleOutput: string | null;
  /** Hash of the publish request, so that a retried identical request returns this version. */
  requestFingerprint: string;
  publishedBy: string;
  publishedAt: string;
}
