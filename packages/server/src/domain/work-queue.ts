/**
 * How a service says "work was queued" to whatever runs its queue. The domain owns this port so
 * it never learns who runs its background work: today a queue job of `jobs/` on this node,
 * later a worker of the cluster.
 */
export interface QueueSignal {
  /** Run the queue soon. Wakes that arrive while it runs make it run once more, never twice at once. */
  wake(): void;
}
