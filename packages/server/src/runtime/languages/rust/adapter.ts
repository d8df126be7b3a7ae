/**
 * Rust: `cargo build --release`, with a dependency layer that holds the downloaded crates and
 * the dependencies already compiled, so that a push changing only code compiles just the
 * algorithm's own crate (well under a second for the template).
 *
 * Layer (keyed by Cargo.toml, Cargo.lock and the repository's .cargo config):
 *   1. a copy of the workspace in /deps/work made of symlinks to /build/src (which is read-only
 *      here), where every `.rs` file is replaced by a stub (`fn main() {}`), so that no code of
 *      the repository runs while the layer is writable and the layer does not depend on it;
 *   2. `cargo generate-lockfile` when no Cargo.lock is committed (network);
 *   3. `cargo fetch` with CARGO_HOME=/deps/cargo: registry index entries, .crate files and
 *      their unpacked sources (network; a stale committed Cargo.lock is updated, as a local
 *      `cargo build` would);
 *   4. `cargo build --release --offline` of the stub workspace into /deps/target, which
 *      compiles every dependency with the features and profile of the real build;
 *   5. the resolved Cargo.lock is kept as /deps/Cargo.lock, the work copy removed.
 * Compile: /deps/Cargo.lock becomes /build/src/Cargo.lock (the future runner's harness crate
 * copies it), /deps/target is copied to /build/src/target and the tree's files are touched
 * (cargo would otherwise take the stub builds of the workspace's own crates, which are newer
 * than the commit's file times, for up to date), then `cargo build --release --offline
 * --locked` with CARGO_HOME read-only (cargo 1.95 needs no write there offline).
 *
 * In-algorithm client: runner/algorithmia/ is the crate `algorithmia` (standard library only). A
 * compile step builds it with rustc into target/algohost-client/libalgorithmia.rlib, and every
 * cargo command runs with RUSTC_WRAPPER=runner/rustc-wrapper, which hands it to the crates of the
 * algorithm's tree (`--extern algorithmia=…`), so `use algorithmia::…` needs no Cargo.toml line.
 * Cargo does not count the wrapper in fingerprints, and registry crates are left alone, so the
 * layer's compiled dependencies stay fresh.
 *
 * Runner: the harness (runner/src/main.rs) is a binary crate made by the last compile step in
 * target/algohost-runner, with the algorithm's package as its dependency `algorithm` (a path
 * dependency renamed, so any package and lib name works) and the package's own serde_json; it
 * gets the algorithm's Cargo.lock and [profile.*] sections (profiles belong to the workspace
 * root), and builds into the same target directory, reusing the compiled dependencies, as
 * target/release/algorithm (the artifact catalog/languages.json names). The runner starts that
 * binary.
 *
 * Toolchain: scripts/install/rust.sh puts one at RUST_HOME, mounted read-only; it is run
 * directly (no rustup proxy, so `rust-toolchain.toml` files are ignored).
 *
 * Registry: crates.io by default. A cluster replaces it through `RegistrySettings.cargoRegistry`
 * (a Cargo source URL such as `sparse+https://mirror.example/index/`), passed to every cargo
 * command as a source replacement (ALGOHOST_CARGO_REGISTRY).
 *
 * Not kept in /cache: downloads are per layer (a layer is made only when the dependency files
 * change), and /cache is writable while the algorithm's own build scripts run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Mount } from '../../sandbox/supervisor.js';
import { INSIDE, RUNNER_INSIDE, type BuildStep, type LanguageAdapter, type RunnerContext, type StepContext } from '../adapter.js';

/** Where scripts/install/rust.sh puts the toolchain; mounted at the same path inside. */
export const RUST_HOME = '/opt/algohost/rust';

const CARGO = `${RUST_HOME}/bin/cargo`;
const SH = '/bin/sh';
const CARGO_HOME = `${INSIDE.deps}/cargo`;
const WORK = `${INSIDE.deps}/work`;
const LAYER_TARGET = `${INSIDE.deps}/target`;
const LAYER_LOCK = `${INSIDE.deps}/Cargo.lock`;
/** The toolchain, looked for until found (then never again: it is not removed while the service runs). */
let cargoFound = false;
// eslint-disable-next-line no-restricted-syntax -- a stat, repeated only while the toolchain is missing (every Rust build then fails anyway)
const cargoInstalled = () => fs.existsSync(path.join(RUST_HOME, 'bin', 'cargo'));
/** The shell steps (build.sh: stub workspace, layer, client, harness), read once at start-up; run by `sh -c` in the sandbox. */
// eslint-disable-next-line no-restricted-syntax -- start-up: read once, when the module loads
const STEPS = fs.readFileSync(new URL('./build.sh', import.meta.url), 'utf8');
const shellStep = (...args: string[]) => [SH, '-c', STEPS, 'build.sh', ...args];

/** Cargo configuration in the repository changes what the layer holds: it is hashed and must be a regular file. */
const CARGO_CONFIG_FILES = ['.cargo/config.toml', '.cargo/config'];

/** The client crate as an rlib, built with the toolchain that builds the algorithm. */
const CLIENT_DIR = 'target/algohost-client';

/** The harness's sources (this folder's runner/), seen read-only at HARNESS_INSIDE by the build. */
const HARNESS_DIR = fileURLToPath(new URL('./runner/', import.meta.url));
const HARNESS_INSIDE = '/opt/algohost/harness/rust';
const HARNESS_CRATE = 'target/algohost-runner';
/** The binary the runner starts (catalog/languages.json's artifact for Rust). */
const RUNNER_BINARY = 'target/release/algorithm';

export const rustAdapter: LanguageAdapter = {
  folder: 'rust',
  languages: ['rust'],
  dependencyFiles: ['Cargo.toml', 'Cargo.lock', ...CARGO_CONFIG_FILES],

  installDependencies(ctx: StepContext) {
    // Without a regular Cargo.toml there is nothing to resolve; compile() reports why.
    if (ctx.read('Cargo.toml') === undefined) return [];
    const manifest = ['--manifest-path', `${WORK}/Cargo.toml`];
    const steps: BuildStep[] = [
      {
        title: 'prepare a stub copy of the workspace',
        argv: shellStep('prepare', INSIDE.deps, WORK, INSIDE.src, ...CARGO_CONFIG_FILES),
        network: false,
      },
    ];
    if (ctx.read('Cargo.lock') === undefined) {
      steps.push({ title: 'generate Cargo.lock (none is committed)', argv: cargo(ctx, 'generate-lockfile', ...manifest), network: true });
    }
    steps.push(
      { title: 'fetch the dependencies', argv: cargo(ctx, 'fetch', ...manifest), network: true },
      {
        title: 'compile the dependencies',
        argv: cargo(ctx, 'build', '--release', '--offline', '--locked', ...manifest),
        env: { CARGO_TARGET_DIR: LAYER_TARGET },
        network: false,
      },
      { title: 'keep Cargo.lock', argv: shellStep('keep-lock', WORK, LAYER_LOCK), network: false },
    );
    return steps;
  },

  compile(ctx: StepContext) {
    if (!ctx.files.has('Cargo.toml')) {
      return [fail('find Cargo.toml', 'no Cargo.toml at the repository root: a Rust algorithm is a Cargo package (see the template)')];
    }
    if (ctx.read('Cargo.toml') === undefined) {
      return [fail('read Cargo.toml', 'Cargo.toml must be a regular file of at most 5 MB, not a symbolic link')];
    }
    return [
      { title: 'reuse the compiled dependencies', argv: shellStep('use-layer', LAYER_LOCK, LAYER_TARGET), network: false },
      {
        title: 'compile the in-algorithm client (crate algorithmia)',
        argv: shellStep('client', HARNESS_INSIDE, CLIENT_DIR),
        network: false,
      },
      { title: 'cargo build --release', argv: cargo(ctx, 'build', '--release', '--offline', '--locked'), network: false },
      {
        title: 'build the runner harness',
        argv: shellStep('harness', HARNESS_INSIDE, INSIDE.src, HARNESS_CRATE, RUNNER_BINARY, ...cargo(ctx)),
        network: false,
      },
    ];
  },

  // The harness is compiled into each artifact: build.sh says which protocol it speaks.
  runnerProtocolFile: `${RUNNER_BINARY}.protocol`,

  runner(ctx: RunnerContext) {
    // runner/src/main.rs writes the output marks (flushing stdout's LineWriter first); a harness
    // built before them does not, and its runners take one call at a time.
    return { argv: [`${RUNNER_INSIDE.app}/${RUNNER_BINARY}`], env: {}, outputMarks: ctx.harnessProtocol === 'output-marks' };
  },

  env() {
    return {
      PATH: `${RUST_HOME}/bin:/usr/bin:/bin`,
      RUSTC: `${RUST_HOME}/bin/rustc`,
      RUSTDOC: `${RUST_HOME}/bin/rustdoc`,
      CARGO_HOME,
      CARGO_TARGET_DIR: `${INSIDE.src}/target`,
      CARGO_TERM_COLOR: 'never',
      CARGO_TERM_PROGRESS_WHEN: 'never',
      CARGO_INCREMENTAL: '0',
      RUSTC_WRAPPER: `${HARNESS_INSIDE}/rustc-wrapper`,
    };
  },

  toolchainMounts(): Mount[] {
    if (!cargoFound) cargoFound = cargoInstalled();
    if (!cargoFound) {
      throw new Error(`the Rust toolchain is not installed at ${RUST_HOME}: run scripts/install/rust.sh as root`);
    }
    return [
      { host: RUST_HOME, inside: RUST_HOME },
      { host: HARNESS_DIR, inside: HARNESS_INSIDE },
    ];
  },
};

/** `cargo [registry replacement] <args>`: every cargo command sees the same sources. */
function cargo(ctx: StepContext, ...args: string[]): string[] {
  const registry = ctx.registries.cargoRegistry;
  const config = registry
    ? [
        '--config',
        `source.algohost-registry.registry=${JSON.stringify(registry)}`,
        '--config',
        'source.crates-io.replace-with="algohost-registry"',
      ]
    : [];
  return [CARGO, ...config, ...args];
}

function fail(title: string, message: string): BuildStep {
  return { title, argv: [SH, '-c', 'echo "error: $1" >&2; exit 1', 'sh', message], network: false };
}
