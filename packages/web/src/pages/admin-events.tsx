import { useState } from 'preact/hooks';
import { type AlgohostClient, AlgohostError, type KafkaCluster } from '@algohost/client';
import { Link } from '../router.js';
import { Form, SelectField, TextField, useProblems } from '../forms.js';
import type { SignedIn } from '../session.js';
import { Busy, ConfirmButton, ErrorText, Field, type Loaded, Show, Table, Time, useAction, useLoad } from '../ui.js';

const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;

/**
 * The admin's side of Event Flows: Kafka cluster connections (the SASL password goes in and
 * never comes back), each cluster's topics as the cluster lists them, and topic assignments.
 */
export function AdminEvents({ session }: { session: SignedIn }) {
  const clusters = useLoad(() => session.client.events.clusters(), [session]);
  return (
    <>
      <ConnectCluster session={session} onConnected={clusters.reload} />
      <section aria-labelledby="clusters">
        <h2 id="clusters">Kafka clusters</h2>
        <Show loaded={clusters} label="the Kafka clusters">
          {(list) =>
            list.length === 0 ? (
              <p class="muted">No Kafka cluster is connected.</p>
            ) : (
              <ul class="cards">
                {list.map((k) => (
                  <ClusterCard key={k.id} session={session} cluster={k} onDeleted={clusters.reload} />
                ))}
              </ul>
            )
          }
        </Show>
      </section>
      <Insights session={session} clusters={clusters.data ?? []} />
    </>
  );
}

/**
 * Insights: the one topic the metrics algorithms report go to (a second connection is refused,
 * so the form shows only while none is configured).
 */
function Insights({ session, clusters }: { session: SignedIn; clusters: KafkaCluster[] }) {
  const c = session.client;
  const connection = useLoad(
    () =>
      c.insights.connection().catch((err: unknown) => {
        if (err instanceof AlgohostError && err.code === 8007) return null;
        throw err;
      }),
    [session],
  );
  const disconnect = useAction(async () => {
    await c.insights.disconnect();
    connection.reload();
  });
  return (
    <section aria-labelledby="insights">
      <h2 id="insights">Insights</h2>
      <p class="muted">
        Metrics that algorithms report while they run (versions published with Insights on) go to one topic, with the algorithm, version,
        owner and request id added. Only one connection can be configured.
      </p>
      <Show loaded={connection} label="the Insights connection">
        {(conn) =>
          conn ? (
            <div class="card" data-testid="insights-connection">
              <dl class="kv">
                <dt>Cluster</dt>
                <dd>{conn.cluster.name}</dd>
                <dt>Topic</dt>
                <dd>
                  <code>{conn.topic}</code>
                </dd>
                <dt>Configured</dt>
                <dd>
                  <Time iso={conn.created_at} />
                </dd>
              </dl>
              <ConfirmButton
                label="Stop sending Insights"
                question={
                  <p>Stop sending Insights to {conn.topic}? Algorithms' reports are refused until a connection is configured again.</p>
                }
                confirmText={conn.topic}
                onConfirm={() => disconnect.run()}
                busy={disconnect.busy}
                error={disconnect.error}
              />
            </div>
          ) : (
            <ConnectInsights session={session} clusters={clusters} onConnected={connection.reload} />
          )
        }
      </Show>
    </section>
  );
}

/** Choosing the cluster, then one of the topics it lists, that Insights go to. */
function ConnectInsights({ session, clusters, onConnected }: { session: SignedIn; clusters: KafkaCluster[]; onConnected: () => void }) {
  const c = session.client;
  const [cluster, setCluster] = useState('');
  const [topic, setTopic] = useState('');
  const topics = useLoad(() => (cluster ? c.events.topics(cluster) : Promise.resolve([])), [cluster]);
  const connect = useAction(async () => {
    await c.insights.connect({ cluster, topic });
    setCluster('');
    setTopic('');
    onConnected();
  });
  return (
    <Form onSubmit={() => void connect.run()}>
      <div class="grid-2">
        <SelectField
          label="Insights cluster"
          hint="A connected Kafka cluster."
          required
          value={cluster}
          onValue={setCluster}
          options={[['', 'choose a cluster'], ...clusters.map((k) => [k.name, k.name] as const)]}
        />
        <SelectField
          label="Insights topic"
          required
          value={topic}
          onValue={setTopic}
          options={[['', 'choose a topic'], ...(topics.data ?? []).map((t) => [t.name, t.name] as const)]}
        />
      </div>
      <ErrorText error={connect.error} />
      <Busy type="submit" busy={connect.busy}>
        Send Insights here
      </Busy>
    </Form>
  );
}

function ConnectCluster({ session, onConnected }: { session: SignedIn; onConnected: () => void }) {
  const [name, setName] = useState('');
  const [servers, setServers] = useState('');
  const [tls, setTls] = useState(false);
  const [ca, setCa] = useState('');
  const [mechanism, setMechanism] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const problems = useProblems();
  const bootstrap = servers
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  const problem = bootstrap.length === 0 ? 'Name at least one server as host:port.' : null;
  const connect = useAction(async () => {
    await session.client.events.connectCluster({
      name: name.trim(),
      bootstrap_servers: bootstrap,
      tls,
      ...(tls && ca.trim() ? { tls_ca: ca } : {}),
      ...(mechanism ? { sasl: { mechanism: mechanism as (typeof MECHANISMS)[number], username, password } } : {}),
    });
    // Start the next connection from a blank form (and forget the password at once).
    problems.hide();
    setName('');
    setServers('');
    setTls(false);
    setCa('');
    setMechanism('');
    setUsername('');
    setPassword('');
    onConnected();
  });
  return (
    <section aria-labelledby="connect-cluster">
      <h2 id="connect-cluster">Connect a Kafka cluster</h2>
      <Form onSubmit={() => problems.submit(problem, () => void connect.run())}>
        <div class="grid-2">
          <div>
            <Field label="Cluster name" hint="How assignments and the CLI name it.">
              {(p) => <input {...p} required value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />}
            </Field>
            <Field label="Bootstrap servers" hint="host:port, separated by commas or spaces." error={problems.shown(problem)}>
              {(p) => <input {...p} required value={servers} onInput={(e) => setServers(e.currentTarget.value)} autoComplete="off" />}
            </Field>
            <label class="inline">
              <input type="checkbox" checked={tls} onChange={(e) => setTls(e.currentTarget.checked)} /> Connect with TLS
            </label>
            {tls && (
              <Field label="Extra CA certificates (PEM)" hint="Optional: trusted besides the system's.">
                {(p) => <textarea {...p} rows={3} value={ca} onInput={(e) => setCa(e.currentTarget.value)} />}
              </Field>
            )}
          </div>
          <div>
            <Field label="SASL mechanism">
              {(p) => (
                <select {...p} value={mechanism} onChange={(e) => setMechanism(e.currentTarget.value)}>
                  <option value="">none</option>
                  {MECHANISMS.map((m) => (
                    <option key={m} value={m}>
                      {m}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {mechanism && (
              <>
                <Field label="SASL username">
                  {(p) => <input {...p} required value={username} onInput={(e) => setUsername(e.currentTarget.value)} autoComplete="off" />}
                </Field>
                <Field label="SASL password" hint="Stored encrypted with the cluster key; never shown again.">
                  {(p) => (
                    <input
                      {...p}
                      type="password"
                      required
                      value={password}
                      onInput={(e) => setPassword(e.currentTarget.value)}
                      autoComplete="new-password"
                    />
                  )}
                </Field>
              </>
            )}
          </div>
        </div>
        <ErrorText error={connect.error} />
        <Busy type="submit" busy={connect.busy}>
          Connect cluster
        </Busy>
      </Form>
    </section>
  );
}

function ClusterCard({ session, cluster: k, onDeleted }: { session: SignedIn; cluster: KafkaCluster; onDeleted: () => void }) {
  const c = session.client;
  const topics = useLoad(() => c.events.topics(k.name), [k.id]);
  const assignments = useLoad(() => c.events.assignments(k.name), [k.id]);
  const remove = useAction(async () => {
    await c.events.disconnectCluster(k.name);
    onDeleted();
  });
  const headingId = `cluster-${k.id}`;
  return (
    <li class="card" data-testid="cluster" aria-labelledby={headingId}>
      <div class="page-head">
        <h3 id={headingId}>{k.name}</h3>
        <ConfirmButton
          label={`Disconnect ${k.name}`}
          question={<p>Disconnect {k.name}? Its assignments and their flows are deleted; the topics stay in Kafka.</p>}
          confirmText={k.name}
          onConfirm={() => remove.run()}
          busy={remove.busy}
          error={remove.error}
        />
      </div>
      <dl class="kv">
        <dt>Bootstrap servers</dt>
        <dd>
          <code>{k.bootstrap_servers.join(', ')}</code>
        </dd>
        <dt>TLS</dt>
        <dd>{k.tls ? (k.tls_ca_set ? 'yes, with extra CA certificates' : 'yes') : 'no'}</dd>
        <dt>SASL</dt>
        <dd>{k.sasl ? `${k.sasl.mechanism} as ${k.sasl.username} (password stored)` : 'none'}</dd>
        <dt>Connected</dt>
        <dd>
          <Time iso={k.created_at} />
        </dd>
      </dl>
      <h4>Topics</h4>
      <Show loaded={topics} label={`the topics of ${k.name}`}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">The cluster has no topics.</p>
          ) : (
            <ul class="topic-list" aria-label={`Topics of ${k.name}`}>
              {list.map((t) => (
                <li key={t.name}>
                  <code>{t.name}</code> <span class="muted">({t.partitions === 1 ? '1 partition' : `${t.partitions} partitions`})</span>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <h4>Assignments</h4>
      <Assignments session={session} cluster={k} assignments={assignments} />
      <AssignToTopic session={session} cluster={k} topics={topics.data ?? []} onAssigned={assignments.reload} />
    </li>
  );
}

type Assignment = Awaited<ReturnType<AlgohostClient['events']['assignments']>>[number];

/** The algorithms assigned to the cluster's topics, each with a button that removes it. */
function Assignments({
  session,
  cluster: k,
  assignments,
}: {
  session: SignedIn;
  cluster: KafkaCluster;
  assignments: Loaded<Assignment[]>;
}) {
  const unassign = useAction(async (id: string) => {
    await session.client.events.unassign(k.name, id);
    assignments.reload();
  });
  return (
    <>
      <Show loaded={assignments} label={`the assignments of ${k.name}`}>
        {(list) => (
          <Table
            rows={list}
            rowKey={(f) => f.id}
            empty="No algorithm is assigned to a topic of this cluster."
            columns={[
              {
                header: 'Algorithm',
                cell: (f) => {
                  const [owner, name] = f.algorithm.split('/');
                  return <Link href={`/algorithms/${owner}/${name}/events`}>{f.algorithm}</Link>;
                },
              },
              { header: 'Topic', cell: (f) => <code>{f.topic}</code> },
              { header: 'Role', cell: (f) => f.role },
              { header: 'Flow', cell: (f) => (f.enabled ? `enabled, ${f.version ?? 'no version'}` : 'disabled') },
              {
                header: 'Remove',
                cell: (f) => (
                  <Busy
                    type="button"
                    class="secondary small"
                    aria-label={`Remove ${f.algorithm} from ${f.topic}`}
                    busy={unassign.busy}
                    onClick={() => void unassign.run(f.id)}
                  >
                    Remove
                  </Busy>
                ),
              },
            ]}
          />
        )}
      </Show>
      <ErrorText error={unassign.error} />
    </>
  );
}

function AssignToTopic({
  session,
  cluster: k,
  topics,
  onAssigned,
}: {
  session: SignedIn;
  cluster: KafkaCluster;
  topics: { name: string }[];
  onAssigned: () => void;
}) {
  const [algorithm, setAlgorithm] = useState('');
  const [topic, setTopic] = useState('');
  const [role, setRole] = useState<'subscriber' | 'publisher'>('subscriber');
  const assign = useAction(async () => {
    await session.client.events.assign(k.name, { algorithm: algorithm.trim(), topic: topic.trim(), role });
    setAlgorithm('');
    onAssigned();
  });
  return (
    <Form onSubmit={() => void assign.run()}>
      <div class="grid-2">
        <TextField
          label={`Algorithm (owner/name) for ${k.name}`}
          hint="It must have a published version."
          required
          value={algorithm}
          onValue={setAlgorithm}
          autoComplete="off"
        />
        <SelectField
          label={`Topic of ${k.name}`}
          required
          value={topic}
          onValue={setTopic}
          options={[['', 'choose a topic'], ...topics.map((t) => [t.name, t.name] as const)]}
        />
      </div>
      <fieldset>
        <legend>Role</legend>
        <label class="inline">
          <input type="radio" name={`role-${k.id}`} checked={role === 'subscriber'} onChange={() => setRole('subscriber')} /> Subscriber
          (called for each record)
        </label>
        <label class="inline">
          <input type="radio" name={`role-${k.id}`} checked={role === 'publisher'} onChange={() => setRole('publisher')} /> Publisher (its
          results go to the topic)
        </label>
      </fieldset>
      <ErrorText error={assign.error} />
      <Busy type="submit" busy={assign.busy}>
        Assign to topic
      </Busy>
    </Form>
  );
}
