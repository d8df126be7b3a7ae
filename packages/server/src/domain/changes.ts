/**
 * Domain changes that other parts of the node act on (caches forget, sessions' data goes), told
 * after the change is stored. The service that makes a change publishes it; the composition
 * root subscribes the parts that care, so no service names another one made after it.
 */
export type DomainChange =
  /** An algorithm's settings changed or it was deleted: what its next call resolves to may differ. */
  | { kind: 'algorithm_changed'; algorithmId: string }
  /** A version was published: `latest` and version ranges may name another version. */
  | { kind: 'version_published'; algorithmId: string }
  /** A member was added, changed or removed: what the members may call changes with it. */
  | { kind: 'membership_changed'; organizationId: string }
  /** A user or organization was deleted: its keys stop working at once. */
  | { kind: 'account_deleted'; accountId: string }
  /** A request tree ended (its outermost call key was revoked): its session's temporary data goes. */
  | { kind: 'call_session_ended'; session: string }
  /** An Event Flow was added, changed or removed: the flow workers and the publisher table reload. */
  | { kind: 'flow_changed'; flowId: string }
  /** A Kafka cluster connection was removed, and its flows with it: the same reload. */
  | { kind: 'event_cluster_removed'; clusterId: string };

export type DomainChangeKind = DomainChange['kind'];

/** What a service that makes changes is given: it tells, and never knows who listens. */
export interface ChangeNotifier {
  publish(change: DomainChange): void;
}

/** Subscribers run in order of subscription, synchronously, within `publish`. */
export class DomainChanges implements ChangeNotifier {
  private readonly subscribers = new Map<DomainChangeKind, ((change: DomainChange) => void)[]>();

  on<K extends DomainChangeKind>(kind: K, subscriber: (change: Extract<DomainChange, { kind: K }>) => void): void {
    const list = this.subscribers.get(kind) ?? [];
    list.push(subscriber as (change: DomainChange) => void);
    this.subscribers.set(kind, list);
  }

  publish(change: DomainChange): void {
    for (const subscriber of this.subscribers.get(change.kind) ?? []) subscriber(change);
  }
}

/** For services made without subscribers (tests, tools). */
export const ignoreChanges: ChangeNotifier = { publish: () => {} };
