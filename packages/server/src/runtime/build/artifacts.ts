/**
 * Artifacts on disk: `<artifacts>/<algorithm id>/<environment>/<commit>/`, a root-owned
 * directory holding `tree/` and `manifest.json`, made whole by a rename and read back with
 * every name it holds checked again (see Trust in sandbox-builder.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ArtifactManifest {
  algorithmId: string;
  environment: string;
  language: string;
  commit: string;
  /** Dependency layer directory relative to the layers root, or null when none is needed. */
  layer: string | null;
  builtAt: string;
}

/** A built artifact as the runner needs it: host paths, all checked to be inside their roots. */
export interface ArtifactInfo {
  manifest: ArtifactManifest;
  /** The built tree (read-only for runners). */
  tree: string;
  layerDir: string | null;
}

/** An artifact that cannot be run (missing, from an older version, or failing its checks). */
export class ArtifactError extends Error {}

const MANIFEST = 'manifest.json';
const TREE = 'tree';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const ENVIRONMENT = '[A-Za-z0-9][A-Za-z0-9._-]{0,99}';
const COMMIT = '[0-9a-f]{40}(?:[0-9a-f]{24})?';
const ARTIFACT_KEY = new RegExp(`^(${UUID})/(${ENVIRONMENT})/(${COMMIT})$`);
/** What dependencyLayer() names a layer: `<language>/<32 hex digits>`. */
const LAYER_NAME = /^[a-z0-9][a-z0-9-]*\/[0-9a-f]{32}$/;

/** The root-owned directory of an artifact (its tree and manifest); the key is checked first. */
export function artifactPath(artifactsDir: string, key: string): string {
  if (!ARTIFACT_KEY.test(key)) {
    throw new ArtifactError(
      /^[^/]+\/[0-9a-f]+$/.test(key)
        ? `the artifact ${key} was built by an earlier version of algohost, whose artifacts were shared between algorithms; build the algorithm again (push, or POST …/compile) and publish a new version`
        : `${JSON.stringify(key)} is not an artifact name`,
    );
  }
  const dir = path.resolve(artifactsDir, key);
  if (!dir.startsWith(artifactsDir + path.sep)) throw new ArtifactError(`${key} is not an artifact name`);
  return dir;
}

/**
 * Reads an artifact's manifest (root-owned, outside anything a build step could write) and
 * checks what it names: the layer by pattern and resolved inside the layers root.
 */
export async function readArtifact(dirs: { artifacts: string; layers: string }, key: string): Promise<ArtifactInfo> {
  const dir = artifactPath(dirs.artifacts, key);
  const text = await readHostFile(path.join(dir, MANIFEST), 64 * 1024).catch((err: NodeJS.ErrnoException) => {
    throw new ArtifactError(
      err.code === 'ENOENT'
        ? `the artifact ${key} does not exist on this node (build it again)`
        : `the artifact ${key} is damaged: ${err.message}`,
    );
  });
  let manifest: ArtifactManifest;
  try {
    manifest = JSON.parse(text) as ArtifactManifest;
  } catch {
    throw new ArtifactError(`the manifest of artifact ${key} is not JSON`);
  }
  const [, algorithmId, environment, commit] = ARTIFACT_KEY.exec(key)!;
  if (manifest.algorithmId !== algorithmId || manifest.environment !== environment || manifest.commit !== commit) {
    throw new ArtifactError(`the manifest of artifact ${key} names another artifact`);
  }
  let layerDir: string | null = null;
  if (manifest.layer !== null) {
    if (typeof manifest.layer !== 'string' || !LAYER_NAME.test(manifest.layer)) {
      throw new ArtifactError(`the manifest of artifact ${key} names an invalid dependency layer`);
    }
    layerDir = path.resolve(dirs.layers, manifest.layer);
    if (!layerDir.startsWith(dirs.layers + path.sep)) throw new ArtifactError(`the layer of artifact ${key} is outside the layers`);
  }
  return { manifest, tree: path.join(dir, TREE), layerDir };
}

/** Whether the artifact `final` was made already (by an earlier build of the same commit). */
export const artifactBuilt = (final: string) => exists(path.join(final, MANIFEST));

/** Puts the built tree `src` and its manifest into place as the artifact `final`. */
export async function packageArtifact(final: string, src: string, manifest: ArtifactManifest): Promise<void> {
  // Tree and manifest go into a fresh root-owned directory, renamed into place whole.
  await fs.promises.mkdir(path.dirname(final), { recursive: true, mode: 0o711 });
  const staging = await fs.promises.mkdtemp(`${final}.tmp-`);
  try {
    await fs.promises.chmod(staging, 0o711);
    await fs.promises.rename(src, path.join(staging, TREE));
    await writeNewFile(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    try {
      await fs.promises.rename(staging, final);
    } catch (err) {
      // Another build of the same commit finished first: its artifact is as good as ours.
      if (!(await exists(path.join(final, MANIFEST)))) throw err;
    }
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
}

/** Creates a file that must not exist yet (O_EXCL, no link followed) and writes it whole. */
async function writeNewFile(file: string, text: string): Promise<void> {
  const handle = await fs.promises.open(
    file,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}

export const exists = (file: string) =>
  fs.promises.access(file).then(
    () => true,
    () => false,
  );

/** Reads a small root-owned regular file of the host without following a link. */
async function readHostFile(file: string, maxBytes: number): Promise<string> {
  const handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.uid !== process.getuid?.() || st.size > maxBytes) {
      throw Object.assign(new Error('not a small regular file of the service'), { code: 'EINVAL' });
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
