/**
 * The SCM provider contract against FAKES of GitHub, GitLab and Bitbucket Cloud (those cannot
 * run here): the same suite the real Gitea passes, so each adapter speaks its provider's API as
 * documented, while the fakes stand in for the providers.
 */
import { startFakeForge } from '../support/fake-forges.js';
import { scmProviderContract } from '../support/scm-contract.js';

for (const kind of ['github', 'gitlab', 'bitbucket'] as const) {
  scmProviderContract(`${kind} (fake)`, () => startFakeForge(kind));
}
