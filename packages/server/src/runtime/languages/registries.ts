/**
 * The package registries of the build steps, as the egress proxy lets them through. The
 * languages know their registries; the sandbox's proxy only knows hosts and ports.
 */
import { type EgressTarget, parseEgressEntry, urlTarget } from '../sandbox/egress-proxy.js';
import type { RegistrySettings } from './adapter.js';

const DEFAULT_HOSTS = {
  pip: ['pypi.org', 'files.pythonhosted.org'],
  npm: ['registry.npmjs.org'],
  maven: ['repo.maven.apache.org', 'repo1.maven.org'],
  cran: ['cloud.r-project.org'],
  gem: ['rubygems.org', 'index.rubygems.org'],
  cargo: ['index.crates.io', 'static.crates.io', 'crates.io'],
};

/**
 * Where build steps may go: each registry the cluster configured (or that language's public
 * default when unset) plus the operator's extra entries.
 */
export function registryTargets(registries: RegistrySettings, extra: string[]): EgressTarget[] {
  const out: EgressTarget[] = [];
  const add = (url: string | undefined, defaults: string[]) => {
    if (url === undefined || url === '') {
      for (const host of defaults) out.push({ host, port: 443, configured: false });
      return;
    }
    const t = urlTarget(url, true);
    if (t) out.push(t);
  };
  add(registries.pipIndexUrl, DEFAULT_HOSTS.pip);
  add(registries.npmRegistry, DEFAULT_HOSTS.npm);
  add(registries.mavenRepository, DEFAULT_HOSTS.maven);
  add(registries.cranRepository, DEFAULT_HOSTS.cran);
  add(registries.gemSource, DEFAULT_HOSTS.gem);
  add(registries.cargoRegistry, DEFAULT_HOSTS.cargo);
  for (const e of extra) out.push(parseEgressEntry(e));
  // One entry per host and port; configured wins over default.
  const byKey = new Map<string, EgressTarget>();
  for (const t of out) {
    const key = `${t.host}:${t.port}`;
    const seen = byKey.get(key);
    byKey.set(key, seen ? { ...seen, configured: seen.configured || t.configured } : t);
  }
  return [...byKey.values()];
}
