/**
 * Live build output for followers (SSE, `git push -o wait`, the compile endpoint) on this node.
 * A follower gets the lines from its subscription on and one final event.
 */
import { EventEmitter } from 'node:events';
import type { Build } from './model.js';

export type BuildEvent = { type: 'log'; text: string } | { type: 'finished'; build: Build };

export class BuildEvents {
  private readonly emitter = new EventEmitter();

  /**
   * `relay`: cluster mode, on workers: also sends each event to the other nodes (whose followers
   * are there); they hand what they receive to `deliver`.
   */
  constructor(private readonly relay?: (buildId: string, event: BuildEvent) => void) {
    this.emitter.setMaxListeners(0);
  }

  emit(buildId: string, event: BuildEvent): void {
    this.emitter.emit(buildId, event);
    this.relay?.(buildId, event);
  }

  /** An event of a build running on another node, for this node's followers. */
  deliver(buildId: string, event: BuildEvent): void {
    this.emitter.emit(buildId, event);
  }

  subscribe(buildId: string, listener: (e: BuildEvent) => void): () => void {
    this.emitter.on(buildId, listener);
    return () => this.emitter.off(buildId, listener);
  }
}
