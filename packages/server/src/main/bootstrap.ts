/** The first start's admin account and key. */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { CAPABILITIES } from '../domain/accounts/model.js';
import type { Services } from './services.js';

export interface BootstrapResult {
  /** The generated admin key, when this start created it; undefined otherwise. */
  generatedKey?: string;
  keyFile?: string;
}

/**
 * First start: create the `admin` account with an admin key (ALGOHOST_ADMIN_KEY, or a
 * generated one written to <data dir>/initial-admin-key, mode 0600). Later starts keep the
 * stored state; an ALGOHOST_ADMIN_KEY not yet stored is added, so operators can recover access.
 */
export async function bootstrapAdmin(s: Services, config: Config): Promise<BootstrapResult> {
  const existing = await s.accounts.findByName('admin');
  const admin = existing ?? (await s.users.createUnchecked({ username: 'admin', fullname: 'Cluster administrator' }, true));
  if (config.adminKey) {
    if (!(await s.keys.hasKey(config.adminKey)))
      await s.keys.issue(admin, 'admin', [...CAPABILITIES], 'ALGOHOST_ADMIN_KEY', config.adminKey);
    return {};
  }
  if (existing) return {};
  const keyFile = path.join(config.dataDir, 'initial-admin-key');
  const { secret } = await s.keys.issue(admin, 'admin', [...CAPABILITIES], 'initial admin key');
  fs.writeFileSync(keyFile, `${secret}\n`, { mode: 0o600 });
  return { generatedKey: secret, keyFile };
}
