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

/** Paths as seen inside a runner sandbox (runtime protocol, docs/compatibility.md §4). */
export const RUNNER_INSIDE = {
  /** The built artifact (the algorithm's tree after compile), read-only, the working directory. */
  app: '/app',
  /** The dependency layer, read-only (absent when the build made none). */
  deps: '/deps',
  /** This language's runner harness (runtime/languages/<lang>/runner/), read-only. */
  harness: '/opt/algohost/runner',
  /** The response FIFO; also bound at the historical /tmp/algoout. */
  responseFifo: '/run/algohost/algoout',
} as const;

export interface RunnerContext {
  /** Contents of the artifact's algorithmia.conf ({username, algoname, language}), if any. */
  conf: { username?: string; algoname?: string; language?: string };
  /** The algorithm's name (fallback when algorithmia.conf is missing). */
  algorithmName: string;
  /** Whether the build made a dependency layer (mounted at RUNNER_INSIDE.deps). */
  hasLayer: boolean;
  environment: { name: string; runtimeVersion: string };
  /** The trimmed content of the adapter's `runnerProtocolFile` in the artifact, if it has one. */
  harnessProtocol?: string;
}

export interface RunnerCommand {
  argv: string[];
  env: Record<string, string>;
  /**
   * The harness ends each request's output with the mark given in ALGOHOST_OUTPUT_MARK
   * (catalog/templates/README.md, "Output marks"): its runners then take a second call while
   * they run one.
   */
  outputMarks?: boolean;
}

export interface LanguageAdapter {
  /**
   * How to start the runner harness for a built artifact: a long-lived process that loads the
   * algorithm once, prints PIPE_INIT_COMPLETE, then answers one JSON request per stdin line on
   * the response FIFO (docs/compatibility.md §4). Absent = a language this cluster builds but cannot run (every language has one today).
   */
  runner?(ctx: RunnerContext): RunnerCommand;

  /**
   * For a harness compiled into each artifact: the file (relative to the artifact's tree) in which
   * the build wrote which protocol its harness speaks, read into RunnerContext.harnessProtocol
   * when a runner starts, so that artifacts built by an older release keep running as they were built.
   */
  runnerProtocolFile?: string;

  /** Its folder under runtime/languages/; the runner harness is in <folder>/runner/. */
  folder: string;
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
