/** The SCM provider contract against a real Gitea 1.26 (started by scripts/with-services.sh). */
import { giteaForge, giteaSkipReason } from './support/gitea-forge.js';
import { scmProviderContract } from './support/scm-contract.js';

scmProviderContract('Gitea (real)', async () => giteaForge(), giteaSkipReason);
