/** The provider adapters, by kind (the composition root hands this map to the SCM services). */
import type { ScmProviderKind } from '../domain/scm/model.js';
import type { ScmProvider } from '../domain/scm/ports.js';
import { bitbucketProvider } from './bitbucket.js';
import { giteaProvider } from './gitea.js';
import { githubProvider } from './github.js';
import { gitlabProvider } from './gitlab.js';

export const SCM_PROVIDER_ADAPTERS: ReadonlyMap<ScmProviderKind, ScmProvider> = new Map(
  [githubProvider, gitlabProvider, bitbucketProvider, giteaProvider].map((p) => [p.kind, p]),
);
