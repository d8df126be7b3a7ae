/** Rows the store contract tests need under the one they test: an account, and an algorithm of it. */
import crypto from 'node:crypto';
import { SqlAccountStore } from '../../src/storage/account-store.js';
import { SqlAlgorithmStore } from '../../src/storage/algorithm-store.js';
import type { Db } from '../../src/storage/database.js';

const CREATED = '2024-01-01T00:00:00.000Z';

/** Inserts a user account named `name` and resolves with its id. */
export async function insertAccount(db: Db, name: string): Promise<string> {
  const id = crypto.randomUUID();
  await new SqlAccountStore(db).insert({
    id,
    name,
    kind: 'user',
    email: null,
    fullname: null,
    companyName: null,
    companyRole: null,
    passwordHash: null,
    isAdmin: false,
    organization: null,
    createdAt: CREATED,
    updatedAt: CREATED,
  });
  return id;
}

/** Inserts a private Python algorithm `name` of the account `ownerName` and resolves with its id. */
export async function insertAlgorithm(db: Db, ownerId: string, ownerName: string, name: string): Promise<string> {
  const id = crypto.randomUUID();
  await new SqlAlgorithmStore(db).insert({
    id,
    ownerId,
    ownerName,
    name,
    details: { label: name, summary: null, tagline: null },
    settings: {
      algorithmCallability: 'private',
      sourceVisibility: 'closed',
      license: 'apl',
      royaltyMicrocredits: 0,
      networkAccess: 'isolated',
      pipelineEnabled: false,
      insightsEnabled: false,
      environmentName: 'python311',
    },
    createdAt: CREATED,
    updatedAt: CREATED,
  });
  return id;
}
