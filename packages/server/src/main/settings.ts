/**
 * Settings that name catalog entries or hosts, parsed and checked before the node touches
 * anything: a mistake there is one line and exit code 2.
 */
import path from 'node:path';
import { type Config, ConfigError } from '../config/config.js';
import type { CatalogData } from '../domain/catalog/model.js';
import { EgressConfigError, type EgressTarget, parseEgressEntry } from '../runtime/sandbox/egress-proxy.js';
import { registryTargets } from '../runtime/languages/registries.js';
import type { RegistrySettings } from '../runtime/languages/adapter.js';
import { readCatalog } from '../storage/catalog-files.js';

/**
 * Settings that name catalog entries or hosts, checked (and parsed) before anything touches the
 * disk, a socket or the database: a mistake there is one line and exit code 2, nothing else.
 */
export interface CheckedSettings {
  catalog: CatalogData;
  /** ALGOHOST_ENVIRONMENT_MEMORY by environment name, in bytes. */
  environmentMemory: Map<string, number>;
  registries: RegistrySettings;
  /** Where build steps may connect through the egress proxy. */
  egress: EgressTarget[];
  /** Private hosts full-network runners may reach through the egress proxy (ALGOHOST_RUNNER_EGRESS_ALLOW). */
  runnerEgress: EgressTarget[];
}

export function checkSettings(config: Config): CheckedSettings {
  const catalog = readCatalog();
  const environments = new Set(catalog.environments.map((e) => e.name));
  if (!environments.has(config.defaultEnvironment)) {
    throw new ConfigError(`ALGOHOST_DEFAULT_ENVIRONMENT: "${config.defaultEnvironment}" is not an environment of the catalog`);
  }
  const registries: RegistrySettings = {
    pipIndexUrl: config.pipIndexUrl,
    pipFindLinks: splitList(config.pipFindLinks).map((d) => path.resolve(d)),
    npmRegistry: config.npmRegistry,
    mavenRepository: config.mavenRepository,
    cranRepository: config.cranRepository,
    gemSource: config.gemSource,
    cargoRegistry: config.cargoRegistry,
  };
  return {
    catalog,
    environmentMemory: parseEnvironmentMemory(config.environmentMemory, environments),
    registries,
    egress: egressTargets(registries, config.buildEgressAllow),
    runnerEgress: runnerEgressTargets(config.runnerEgressAllow),
  };
}

/** `ALGOHOST_ENVIRONMENT_MEMORY`: "name=MiB,…", every name an environment of the catalog. */
function parseEnvironmentMemory(value: string | undefined, environments: Set<string>): Map<string, number> {
  const byEnvironment = new Map<string, number>();
  for (const entry of splitList(value)) {
    const m = /^([^=\s]+)\s*=\s*(\d+)$/.exec(entry);
    if (!m) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: "${entry}" is not name=MiB (for example python311=1024)`);
    if (!environments.has(m[1]!)) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: no environment named "${m[1]}"`);
    const mib = Number(m[2]);
    if (mib < 16) throw new ConfigError(`ALGOHOST_ENVIRONMENT_MEMORY: ${m[1]} needs at least 16 MiB; got ${mib}`);
    byEnvironment.set(m[1]!, mib * 1024 * 1024);
  }
  return byEnvironment;
}

/** The registries' hosts and `ALGOHOST_BUILD_EGRESS_ALLOW` (host[:port], comma-separated). */
function egressTargets(registries: RegistrySettings, allow: string | undefined): EgressTarget[] {
  try {
    return registryTargets(registries, splitList(allow));
  } catch (err) {
    if (err instanceof EgressConfigError) throw new ConfigError(`ALGOHOST_BUILD_EGRESS_ALLOW: ${err.message}`);
    throw err;
  }
}

/** `ALGOHOST_RUNNER_EGRESS_ALLOW` (host[:port], comma-separated). */
function runnerEgressTargets(allow: string | undefined): EgressTarget[] {
  try {
    return splitList(allow).map((e) => parseEgressEntry(e));
  } catch (err) {
    if (err instanceof EgressConfigError) throw new ConfigError(`ALGOHOST_RUNNER_EGRESS_ALLOW: ${err.message}`);
    throw err;
  }
}

/** Where this node's own services are: runners never reach these addresses. */
export function nodeServiceEndpoints(config: Config): string[] {
  return [
    config.databaseUrl,
    config.natsUrl,
    config.s3Endpoint,
    config.metricsAddress,
    ...splitList(config.sqsEndpointAllow),
    ...splitList(config.serviceBusEndpointAllow),
  ].filter((e): e is string => e !== undefined && e !== '');
}

export const splitList = (v: string | undefined) =>
  v
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];
