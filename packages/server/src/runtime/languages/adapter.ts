/**
 * What a language contributes: which files decide its dependency layer, how to fill that layer,
 * and how to compile. Processes, sandboxing, limits and caching live elsewhere (the builder and
 * the supervisor), the same for every language.
 */
import type { Mount } from '../sandbox/supervisor.js';

/** Paths as seen inside the build sandbox. */
export const INSIDE = {
  src: '/build/src',
  deps: '/deps',
  cache: '/cache',
} as const;

export interface RegistrySettings {
  pipIndexUrl?: string;
  /** Extra directories of wheels for pip (--find-links), mounted read-only. */
  pipFindLinks: string[];
  npmRegistry?: string;
  mavenRepository?: string;
  cranRepository?: string;
  gemSource?: string;
  /** Cargo source replacing crates.io. */
  cargoRegistry?: string;
}

export interface BuildStep {
  title: string;
  argv: string[];
  env?: Record<string, string>;
  /** Package registries are reachable only in steps that say so. */
  network: boolean;
}

export interface StepContext {
  /** The environment being built for (name and runtime version), e.g. to pick a compiler. */
  environment: { name: string; runtimeVersion: string };
  /** Files at the repository root (top level only), to decide what to run. */
  files: ReadonlySet<string>;
  registries: RegistrySettings;
  /** Mounted read-only extra inputs, such as pip's find-links directories, by inside path. */
  extraInputs: string[];
  /** Content of a dependency file at the repository root; undefined when absent. */
  read(file: string): string | undefined;
}

export interface LanguageAdapter {
  /** Catalog language names this adapter builds (e.g. python3, python2). */
  languages: string[];
  /** Files whose content decides the dependency layer; their hash keys the layer cache. */
  dependencyFiles: string[];
  /** Fills the empty layer at INSIDE.deps; INSIDE.src is read-only here. Empty = no layer needed. */
  installDependencies(ctx: StepContext): BuildStep[];
  /** Compiles in INSIDE.src with the layer mounted read-only. */
  compile(ctx: StepContext): BuildStep[];
  /** Environment every step gets (PATH and the like). */
  env(): Record<string, string>;
  /** Toolchain directories outside /usr that steps need, mounted read-only. */
  toolchainMounts?(): Mount[];
}
