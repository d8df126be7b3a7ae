import { useState } from 'preact/hooks';
import type { EventDelivery, EventFlow } from '@algohost/client';
import { Form, PasswordField, SelectField, TextField, useFields } from '../../forms.js';
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

/** A timeout field's text as seconds: empty is none (the default applies). */
function timeoutSeconds(text: string): number | null {
  const t = text.trim();
  const seconds = t === '' ? null : Number(t);
  if (seconds !== null && !(Number.isFinite(seconds) && seconds > 0)) throw new Error('The timeout is a number of seconds above 0.');
  return seconds;
}

function FlowCard({ flow: f, ...rest }: Base & { flow: EventFlow; versions: string[]; onChanged: () => void }) {
  return (
    <li class="card" data-testid="flow">
      <div class="page-head">
        <h3>{flowTitle(f)}</h3>
        <span class={`badge ${f.enabled ? 'status-succeeded' : ''}`}>{f.enabled ? 'enabled' : 'disabled'}</span>
      </div>
      <FlowFacts flow={f} />
      <FlowSettings flow={f} {...rest} />
    </li>
  );
}

/** Why a flow has no status: no node sends for it (a publisher; a subscriber always has one). */
function notRunning(f: EventFlow): string {
  if (!f.enabled) return 'not running: disabled';
  if (!f.version) return 'not running: no version chosen';
  return 'starting: no node has reported it yet';
}

/** Why what waits for a subscriber is not being read, while it is not: stopped or starting. */
function notConsuming(f: EventFlow): string | null {
  if (f.status?.state === 'stopped') return f.enabled ? 'not consuming: no version chosen' : 'not consuming: disabled';
  if (f.status?.state === 'starting') return 'not consuming yet: starting';
  return null;
}

/** The lag, and why it is not read yet; or why there is none to show. */
function lagText(f: EventFlow): { lag: string | null; note: string } {
  const lag = f.status?.lag ?? null;
  const why = notConsuming(f);
  if (lag !== null) return { lag: String(lag), note: why ? `(${why})` : '' };
  if (f.role === 'publisher') return { lag: null, note: 'none: a publisher writes to its topic and reads nothing' };
  if (f.status?.error?.startsWith('lag not measured')) return { lag: null, note: `not measured${why ? ` (${why})` : ''}` };
  return { lag: null, note: 'not known yet: the consumer has not measured it' };
}

function Lag({ flow: f }: { flow: EventFlow }) {
  const { lag, note } = lagText(f);
  if (lag === null) return <span class="muted">{note}</span>;
  return (
    <>
      {lag}
      {note && <span class="muted"> {note}</span>}
    </>
  );
}

/** What the flow is doing now, its dead letters and credentials. */
function FlowFacts({ flow: f }: { flow: EventFlow }) {
  return (
    <dl class="kv">
      <dt>State</dt>
      <dd>{f.status ? <StatusBadge status={f.status.state} /> : <span class="muted">{notRunning(f)}</span>}</dd>
      <dt>Lag</dt>
      <dd data-testid="flow-lag">
        <Lag flow={f} />
      </dd>
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
              sent with every AssumeRole (SourceIdentity <code>{f.credentials.source_identity}</code>); the role’s trust policy must require
              it.
            </span>
          </dd>
        </>
      )}
      <dt>Flow id</dt>
      <dd>
        <code>{f.id}</code>
      </dd>
    </dl>
  );
}

/** The flow's version and timeout, enabling or disabling it, and deleting a queue flow. */
function FlowSettings({
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
    const seconds = timeoutSeconds(timeout);
    await c.events.updateFlow(a.owner, a.name, f.id, { version: version || null, timeout: seconds });
    onChanged();
  });
  const remove = useAction(async () => {
    await c.events.deleteFlow(a.owner, a.name, f.id);
    onChanged();
  });
  const choices = f.version && !versions.includes(f.version) ? [f.version, ...versions] : versions;
  return (
    <Form onSubmit={() => void save.run()}>
      <div class="grid-2">
        <SelectField
          label="Version"
          hint="The published version the flow runs."
          value={version}
          onValue={setVersion}
          options={[['', 'none'], ...choices.map((v) => [v, v] as const)]}
        />
        <TextField
          label="Timeout (seconds)"
          hint="Per delivery's call; empty means 60."
          inputMode="decimal"
          value={timeout}
          onValue={setTimeoutText}
        />
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
    </Form>
  );
}

interface QueueFlowDraft {
  service: 'sqs' | 'servicebus';
  uri: string;
  kind: 'role' | 'static';
  roleArn: string;
  keyId: string;
  secret: string;
  timeout: string;
}

/** What the form forgets once a flow is made (the secret above all). */
const NO_QUEUE = { uri: '', roleArn: '', keyId: '', secret: '', timeout: '' };

function NewQueueFlow({ session, algorithm: a, onCreated }: Base & { onCreated: () => void }) {
  const draft = useFields<QueueFlowDraft>({ service: 'sqs', kind: 'role', ...NO_QUEUE });
  const { values: v, set } = draft;
  const create = useAction(async () => {
    const seconds = timeoutSeconds(v.timeout);
    const source_uri = v.uri.trim();
    await session.client.events.createQueueFlow(
      a.owner,
      a.name,
      v.service === 'servicebus'
        ? {
            source_type: 'servicebus',
            source_uri,
            credentials: { shared_access_key_name: v.keyId.trim(), shared_access_key: v.secret },
            timeout: seconds,
          }
        : {
            source_type: 'sqs',
            source_uri,
            credentials:
              v.kind === 'role' ? { role_arn: v.roleArn.trim() } : { access_key_id: v.keyId.trim(), secret_access_key: v.secret },
            timeout: seconds,
          },
    );
    draft.update(NO_QUEUE);
    onCreated();
  });
  return (
    <section aria-labelledby="new-queue-flow">
      <h2 id="new-queue-flow">Subscribe to a queue</h2>
      <Form onSubmit={() => void create.run()}>
        <fieldset>
          <legend>Queue service</legend>
          <label class="inline">
            <input type="radio" name="queue-service" checked={v.service === 'sqs'} onChange={() => set('service')('sqs')} /> Amazon SQS
          </label>
          <label class="inline">
            <input type="radio" name="queue-service" checked={v.service === 'servicebus'} onChange={() => set('service')('servicebus')} />{' '}
            Azure Service Bus
          </label>
        </fieldset>
        <Field
          label="Queue URL"
          hint={
            v.service === 'sqs' ? 'https://sqs.<region>.amazonaws.com/<account>/<queue>' : 'sb://<namespace>.servicebus.windows.net/<queue>'
          }
        >
          {(p) => <input {...p} type="url" required value={v.uri} onInput={(e) => set('uri')(e.currentTarget.value)} autoComplete="off" />}
        </Field>
        {v.service === 'servicebus' ? (
          <ServiceBusCredentials draft={v} set={set} />
        ) : (
          <SqsCredentials draft={v} set={set} session={session} account={a.owner} />
        )}
        <TextField
          label="Timeout (seconds)"
          hint="Per delivery's call; empty means 60, at most 3000."
          inputMode="decimal"
          value={v.timeout}
          onValue={set('timeout')}
        />
        <ErrorText error={create.error} />
        <Busy type="submit" busy={create.busy}>
          Create queue flow
        </Busy>
      </Form>
    </section>
  );
}

type DraftProps = {
  draft: QueueFlowDraft;
  set: <K extends keyof QueueFlowDraft>(key: K) => (value: QueueFlowDraft[K]) => void;
};

function ServiceBusCredentials({ draft: v, set }: DraftProps) {
  return (
    <fieldset>
      <legend>Credentials</legend>
      <div class="grid-2">
        <TextField
          label="Shared access key name"
          hint="A policy with Listen rights on the queue or namespace."
          required
          value={v.keyId}
          onValue={set('keyId')}
          autoComplete="off"
        />
        <PasswordField
          label="Shared access key"
          hint="Stored encrypted; never shown again."
          required
          value={v.secret}
          onValue={set('secret')}
          autoComplete="off"
        />
      </div>
    </fieldset>
  );
}

function SqsCredentials({ draft: v, set, session, account }: DraftProps & { session: Base['session']; account: string }) {
  return (
    <fieldset>
      <legend>Credentials</legend>
      <label class="inline">
        <input type="radio" name="sqs-credentials" checked={v.kind === 'role'} onChange={() => set('kind')('role')} /> An IAM role the node
        assumes
      </label>
      <label class="inline">
        <input type="radio" name="sqs-credentials" checked={v.kind === 'static'} onChange={() => set('kind')('static')} /> An access key
      </label>
      {v.kind === 'role' ? (
        <>
          <TextField label="Role ARN" required value={v.roleArn} onValue={set('roleArn')} autoComplete="off" />
          <RoleTrust session={session} account={account} />
        </>
      ) : (
        <div class="grid-2">
          <TextField label="Access key id" required value={v.keyId} onValue={set('keyId')} autoComplete="off" />
          <PasswordField
            label="Secret access key"
            hint="Stored encrypted; never shown again."
            required
            value={v.secret}
            onValue={set('secret')}
            autoComplete="off"
          />
        </div>
      )}
    </fieldset>
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
                      <th scope="col">At</th>
                      <th scope="col">Outcome</th>
                      <th scope="col">Source</th>
                      <th scope="col">Attempts</th>
                      <th scope="col">Latency</th>
                      <th scope="col">Error or dead letter</th>
                      <th scope="col" class="wide">
                        Flow
                      </th>
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

/** One delivery; its time leads, since with a long source or error the last columns would scroll out of a laptop's view. */
function DeliveryRow({ d, flow }: { d: EventDelivery; flow: string }) {
  return (
    <tr>
      <td class="nowrap">
        <Time iso={d.created_at} />
      </td>
      <td>
        <StatusBadge status={d.outcome} />
      </td>
      <td class="break">
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
    </tr>
  );
}
