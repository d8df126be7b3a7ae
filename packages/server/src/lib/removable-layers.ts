/**
 * Which dependency layers on a node may be removed again: the meeting point of the builder
 * (runtime/build), which never removes a layer, and the cluster's artifact store
 * (cluster/artifact-store.ts), which removes the layers it fetched once no artifact it keeps
 * needs them. A layer the builder uses (reuses or makes) is the node's own from then on and is
 * never removed, even when it was first fetched.
 *
 * Each decision is synchronous (no await between the check and the mark), and a removal under
 * way can be awaited: a build or a fetch that is about to use a layer registers first, then
 * waits for any removal of it to end and only then looks whether it exists, so it never takes
 * up a layer that is going away.
 */
export class RemovableLayers {
  /** Layers a build here used: never removable. */
  private readonly own = new Set<string>();
  /** Fetched layers no build here used, with the bytes they count in the cache bound. */
  private readonly fetched = new Map<string, number>();
  private readonly removing = new Map<string, Promise<void>>();

  /** The builder is about to use the layer: it stays for good. Resolves once a removal already under way has ended. */
  async claim(name: string): Promise<void> {
    this.own.add(name);
    this.fetched.delete(name);
    await this.settled(name);
  }

  /** A fetch placed the layer: removable unless a build here claimed it meanwhile. */
  addFetched(name: string, bytes: number): void {
    if (!this.own.has(name)) this.fetched.set(name, bytes);
  }

  /** Resolves once a removal of the layer under way (if any) has ended. */
  settled(name: string): Promise<void> {
    return this.removing.get(name) ?? Promise.resolve();
  }

  /** The removable layers with their bytes. */
  entries(): [string, number][] {
    return [...this.fetched];
  }

  /**
   * Takes the layer out of the removable ones and runs `remove`, which others can await through
   * settled(); undefined (nothing run) when it is not removable. The caller checks, in the same
   * synchronous stretch, that nothing it keeps uses the layer.
   */
  remove(name: string, remove: () => Promise<void>): Promise<void> | undefined {
    if (!this.fetched.has(name) || this.removing.has(name)) return undefined;
    this.fetched.delete(name);
    const done = remove().finally(() => this.removing.delete(name));
    this.removing.set(name, done);
    return done;
  }
}
