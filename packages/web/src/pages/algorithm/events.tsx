import { useState } from 'preact/hooks';
import type { EventDelivery, EventFlow } from '@algohost/client';
import { Busy, ConfirmButton, ErrorText, Field, Show, StatusBadge, Time, useAction, useLoad } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

const PAGE = 20;

/**
 * The algorithm's Event Flows (docs/compatibility.md §10): Kafka topic assignments a cluster
 * admin made and SQS and Service Bus queue flows the owner made; each is enabled, given its published version
 * and timeout here. Below, the deliveries, newest first, a page at a time.
 */
export function EventsTab({ session, algorithm: a }: TabProps) {
  const c = session.client;
  const flows = useLoad(() => c.events.flows(a.owner, a.name), [a.id]);
  // Only published versions may run a flow: offer those (the API checks again).
  const versions = useLoad(async () => {
    const page = await c.versions.list(a.owner, a.name, { limit: 100 });
    return page.results.map((v) => v.version_info.semantic_version).filter((v): v is string => !!v);
  }, [a.id]);
  return (
    <>
      <section aria-labelledby="flows">
        <h2 id="flows">Event Flows</h2>
        <p class="hint">
          Kafka topics are assigned by a cluster admin; you enable the flow and pick the version it runs. A subscriber calls the algorithm
          once per record, as you; a publisher sends the result of every successful call of its version to the topic.
        </p>
        <Show loaded={flows} label="the event flows">
          {(list) =>
            list.length === 0 ? (
              <p class="muted">
                No flows yet: subscribe to an SQS or Service Bus queue below, or ask a cluster admin to assign a Kafka topic.
              </p>
            ) : (
              <ul class="cards">
                {list.map((f) => (
                  <FlowCard
                    key={`${f.id}-${f.updated_at}`}
                    {...{ session, algorithm: a }}
                    flow={f}
                    versions={versions.data ?? []}
                    onChanged={flows.reload}
                  />
                ))}
              </ul>
            )
          }
        </Show>
      </section>
      <NewQueueFlow {...{ session, algorithm: a }} onCreated={flows.reload} />
      <Deliveries {...{ session, algorithm: a }} flows={flows.data ?? []} />
    </>
  );
}

type Base = Pick<TabProps, 'session' | 'algorithm'>;

function flowTitle(f: EventFlow): string {
  if (f.source_type === 'kafka') return `Kafka ${f.role}: ${f.cluster?.name ?? '?'} / ${f.topic ?? '?'}`;
  return `${f.source_type === 'servicebus' ? 'Service Bus' : 'SQS'} subscriber: ${f.source_uri ?? '?'}`;
}

function FlowCard({
  session,
  algorithm: a,
  flow: f,
  versions,
  onChanged,
}: Base & { flow: EventFlow; versions: string[]; onChanged: () => void }) {
  const c = session.client;
  const [version, setVersion] = useState(f.version ?? '');
  const [timeout, setTimeoutText] = useState(f.timeout === null ? '' : String(f.timeout));
  const toggle = useAction(async () => {
    await c.events.updateFlow(a.owner, a.name, f.id, { enabled: !f.enabled });
    onChanged();
  });
  const save = useAction(async () => {
    const t = timeout.trim();
    const seconds = t === '' ? null : Number(t);
    if (seconds !== null && !(Number.isFinite(seconds) && seconds > 0)) throw new Error('The timeout is a number of seconds above 0.');
    await c.events.updateFlow(a.owner, a.name, f.id, { version: version || null, timeout: seconds });
    onChanged();
  });
  const remove = useAction(async () => {
    await c.events.deleteFlow(a.owner, a.name, f.id);
    onChanged();
  });
  const choices = f.version && !versions.includes(f.version) ? [f.version, ...versions] : versions;
  return (
    <li class="card" data-testid="flow">
      <div class="page-head">
        <h3>{flowTitle(f)}</h3>
        <span class={`badge ${f.enabled ? 'status-succeeded' : ''}`}>{f.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      <dl class="kv">
        <dt>State</dt>
        <dd>{f.status ? <StatusBadge status={f.status.state} /> : <span class="muted">not running</span>}</dd>
        <dt>Lag</dt>
        <dd>{f.status?.lag ?? <span class="muted">—</span>}</dd>
        {f.status?.error && (
          <>
            <dt>Error</dt>
            <dd class="error">{f.status.error}</dd>
          </>
        )}
        {f.dead_letter_topic && (
          <>
            <dt>Dead letters</dt>
            <dd>
              <code>{f.dead_letter_topic}</code>
            </dd>
          </>
        )}
        {f.credentials && (
          <>
            <dt>Credentials</dt>
            <dd>
              {f.credentials.kind === 'role' ? 'role' : f.source_type === 'servicebus' ? 'shared access key' : 'access key'}{' '}
              <code>{f.credentials.id}</code>
            </dd>
          </>
        )}
        {f.credentials?.external_id && (
          <>
            <dt>ExternalId</dt>
            <dd>
              <code>{f.credentials.external_id}</code>{' '}
              <span class="hint">
                sent with every AssumeRole (SourceIdentity <code>{f.credentials.source_identity}</code>); the role’s trust policy must
                require it.
              </span>
            </dd>
          </>
        )}
        <dt>Flow id</dt>
        <dd>
          <code>{f.id}</code>
        </dd>
      </dl>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <div class="grid-2">
          <Field label="Version" hint="The published version the flow runs.">
            {(p) => (
              <select {...p} value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
                <option value="">none</option>
                {choices.map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Timeout (seconds)" hint="Per delivery's call; empty means 60.">
            {(p) => <input {...p} inputMode="decimal" value={timeout} onInput={(e) => setTimeoutText(e.currentTarget.value)} />}
          </Field>
        </div>
        <ErrorText error={save.error} />
        <div class="actions">
          <Busy type="submit" class="secondary" busy={save.busy}>
            Save version and timeout
          </Busy>
          <Busy type="button" busy={toggle.busy} onClick={() => void toggle.run()}>
            {f.enabled ? 'Disable' : 'Enable'}
          </Busy>
          {f.source_type !== 'kafka' && (
            <ConfirmButton
              label="Delete flow"
              question={<p>Stop reading {f.source_uri} and delete this flow? Its deliveries are deleted with it.</p>}
              onConfirm={() => remove.run()}
              busy={remove.busy}
              error={remove.error}
            />
          )}
        </div>
        <ErrorText error={toggle.error} />
      </form>
    </li>
  );
}

function NewQueueFlow({ session, algorithm: a, onCreated }: Base & { onCreated: () => void }) {
  const [service, setService] = useState<'sqs' | 'servicebus'>('sqs');
  const [uri, setUri] = useState('');
  const [kind, setKind] = useState<'role' | 'static'>('role');
  const [roleArn, setRoleArn] = useState('');
  const [keyId, setKeyId] = useState('');
  const [secret, setSecret] = useState('');
  const [timeout, setTimeoutText] = useState('');
  const create = useAction(async () => {
    const t = timeout.trim();
    const seconds = t === '' ? null : Number(t);
    if (seconds !== null && !(Number.isFinite(seconds) && seconds > 0)) throw new Error('The timeout is a number of seconds above 0.');
    const source_uri = uri.trim();
    await session.client.events.createQueueFlow(
      a.owner,
      a.name,
      service === 'servicebus'
        ? {
            source_type: 'servicebus',
            source_uri,
            credentials: { shared_access_key_name: keyId.trim(), shared_access_key: secret },
            timeout: seconds,
          }
        : {
            source_type: 'sqs',
            source_uri,
            credentials: kind === 'role' ? { role_arn: roleArn.trim() } : { access_key_id: keyId.trim(), secret_access_key: secret },
            timeout: seconds,
          },
    );
    setUri('');
    setRoleArn('');
    setKeyId('');
    setSecret('');
    setTimeoutText('');
    onCreated();
  });
  return (
    <section aria-labelledby="new-queue-flow">
      <h2 id="new-queue-flow">Subscribe to a queue</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <fieldset>
          <legend>Queue service</legend>
          <label class="inline">
            <input type="radio" name="queue-service" checked={service === 'sqs'} onChange={() => setService('sqs')} /> Amazon SQS
          </label>
          <label class="inline">
            <input type="radio" name="queue-service" checked={service === 'servicebus'} onChange={() => setService('servicebus')} /> Azure
            Service Bus
          </label>
        </fieldset>
        <Field
          label="Queue URL"
          hint={
            service === 'sqs' ? 'https://sqs.<region>.amazonaws.com/<account>/<queue>' : 'sb://<namespace>.servicebus.windows.net/<queue>'
          }
        >
          {(p) => <input {...p} type="url" required value={uri} onInput={(e) => setUri(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        {service === 'servicebus' ? (
          <fieldset>
            <legend>Credentials</legend>
            <div class="grid-2">
              <Field label="Shared access key name" hint="A policy with Listen rights on the queue or namespace.">
                {(p) => <input {...p} required value={keyId} onInput={(e) => setKeyId(e.currentTarget.value)} autoComplete="off" />}
              </Field>
              <Field label="Shared access key" hint="Stored encrypted; never shown again.">
                {(p) => (
                  <input
                    {...p}
                    type="password"
                    required
                    value={secret}
                    onInput={(e) => setSecret(e.currentTarget.value)}
                    autoComplete="off"
                  />
                )}
              </Field>
            </div>
          </fieldset>
        ) : (
          <fieldset>
            <legend>Credentials</legend>
            <label class="inline">
              <input type="radio" name="sqs-credentials" checked={kind === 'role'} onChange={() => setKind('role')} /> An IAM role the node
              assumes
            </label>
            <label class="inline">
              <input type="radio" name="sqs-credentials" checked={kind === 'static'} onChange={() => setKind('static')} /> An access key
            </label>
            {kind === 'role' ? (
              <>
                <Field label="Role ARN">
                  {(p) => <input {...p} required value={roleArn} onInput={(e) => setRoleArn(e.currentTarget.value)} autoComplete="off" />}
                </Field>
                <RoleTrust session={session} account={a.owner} />
              </>
            ) : (
              <div class="grid-2">
                <Field label="Access key id">
                  {(p) => <input {...p} required value={keyId} onInput={(e) => setKeyId(e.currentTarget.value)} autoComplete="off" />}
                </Field>
                <Field label="Secret access key" hint="Stored encrypted; never shown again.">
                  {(p) => (
                    <input
                      {...p}
                      type="password"
                      required
                      value={secret}
                      onInput={(e) => setSecret(e.currentTarget.value)}
                      autoComplete="off"
                    />
                  )}
                </Field>
              </div>
            )}
          </fieldset>
        )}
        <Field label="Timeout (seconds)" hint="Per delivery's call; empty means 60, at most 3000.">
          {(p) => <input {...p} inputMode="decimal" value={timeout} onInput={(e) => setTimeoutText(e.currentTarget.value)} />}
        </Field>
        <ErrorText error={create.error} />
        <Busy type="submit" busy={create.busy}>
          Create queue flow
        </Busy>
      </form>
    </section>
  );
}

/**
 * The ExternalId the node sends when it assumes a role for this account's flows, and the trust
 * policy to put on the role: without the condition any other account could name the role too.
 */
function RoleTrust({ session, account }: { session: Base['session']; account: string }) {
  const settings = useLoad(() => session.client.events.sqsAssumeRole(account), [account]);
  return (
    <Show loaded={settings} label="the ExternalId">
      {(s) => (
        <div class="hint">
          <p>
            The node assumes the role with its own AWS credentials and always sends ExternalId <code>{s.external_id}</code> (this account’s;
            never another’s) and SourceIdentity <code>{s.source_identity}</code>. Give the role this trust policy, with the nodes’ principal
            from your operator, so that no other account’s flow can use it:
          </p>
          <pre>{JSON.stringify(s.trust_policy, null, 2)}</pre>
        </div>
      )}
    </Show>
  );
}

function Deliveries({ session, algorithm: a, flows }: Base & { flows: EventFlow[] }) {
  // The markers of the pages before this one: Back pops, Next pushes.
  const [trail, setTrail] = useState<(string | undefined)[]>([]);
  const [marker, setMarker] = useState<string | undefined>(undefined);
  const [flow, setFlow] = useState('');
  const page = useLoad(
    () => session.client.events.deliveries(a.owner, a.name, { limit: PAGE, marker, flow: flow || undefined }),
    [a.id, marker, flow],
  );
  const titles = new Map(flows.map((f) => [f.id, flowTitle(f)]));
  return (
    <section aria-labelledby="deliveries">
      <div class="page-head">
        <h2 id="deliveries">Deliveries</h2>
        <button type="button" class="secondary small" onClick={page.reload}>
          Refresh
        </button>
      </div>
      <Field label="Flow">
        {(p) => (
          <select
            {...p}
            value={flow}
            onChange={(e) => {
              setFlow(e.currentTarget.value);
              setTrail([]);
              setMarker(undefined);
            }}
          >
            <option value="">all flows</option>
            {flows.map((f) => (
              <option key={f.id} value={f.id}>
                {flowTitle(f)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Show loaded={page} label="the deliveries">
        {(p) => (
          <>
            {p.results.length === 0 ? (
              <p class="muted">No deliveries{trail.length ? ' on this page' : ' yet'}.</p>
            ) : (
              <div class="table-wrap" tabIndex={0}>
                <table>
                  <caption class="muted">Newest first.</caption>
                  <thead>
                    <tr>
                      <th scope="col">Outcome</th>
                      <th scope="col">Source</th>
                      <th scope="col">Attempts</th>
                      <th scope="col">Latency</th>
                      <th scope="col">Error or dead letter</th>
                      <th scope="col" class="wide">
                        Flow
                      </th>
                      <th scope="col">At</th>
                    </tr>
                  </thead>
                  <tbody>
                    {p.results.map((d) => (
                      <DeliveryRow key={d.id} d={d} flow={titles.get(d.flow_id) ?? d.flow_id} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {(trail.length > 0 || p.marker) && (
              <div class="actions">
                <button
                  type="button"
                  class="secondary small"
                  disabled={trail.length === 0}
                  onClick={() => {
                    setMarker(trail[trail.length - 1]);
                    setTrail(trail.slice(0, -1));
                  }}
                >
                  Newer
                </button>
                <button
                  type="button"
                  class="secondary small"
                  disabled={!p.marker}
                  onClick={() => {
                    setTrail([...trail, marker]);
                    setMarker(p.marker ?? undefined);
                  }}
                >
                  Older
                </button>
              </div>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

function DeliveryRow({ d, flow }: { d: EventDelivery; flow: string }) {
  return (
    <tr>
      <td>
        <StatusBadge status={d.outcome} />
      </td>
      <td class="nowrap">
        <code>{d.source}</code>
      </td>
      <td>{d.attempts}</td>
      <td class="nowrap">{Math.round(d.latency_ms)} ms</td>
      <td>
        {d.error && <div class="error-text">{d.error}</div>}
        {d.dead_letter && (
          <div>
            dead letter: <code>{d.dead_letter}</code>
          </div>
        )}
        {!d.error && !d.dead_letter && <span class="muted">—</span>}
      </td>
      <td class="wide">{flow}</td>
      <td>
        <Time iso={d.created_at} />
      </td>
    </tr>
  );
}
