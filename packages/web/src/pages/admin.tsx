import { useEffect, useState } from 'preact/hooks';
import { collect, type User } from '@algohost/client';
import { Form, PasswordField, TextField, useFields, useProblems } from '../forms.js';
import { Link } from '../router.js';
import type { SignedIn } from '../session.js';
import { Busy, ConfirmButton, ErrorText, Field, type Loaded, Show, Table, Time, useAction, useLoad, useTitle } from '../ui.js';
import { AdminEvents } from './admin-events.js';
import { AdminScm } from './admin-scm.js';
import { nameProblem } from './create-algorithm.js';

const SECTIONS: [string, string][] = [
  ['health', 'Cluster health'],
  ['users', 'Users'],
  ['organizations', 'Organizations'],
  ['environments', 'Environments'],
  ['scm', 'Source control'],
  ['events', 'Event Flows'],
];

/** The cluster admin's panel (the router shows it to admins only; the API refuses everyone else). */
export function AdminPage({ session, section }: { session: SignedIn; section: string }) {
  useTitle('Admin');
  return (
    <>
      <h1>Cluster administration</h1>
      <nav aria-label="Admin">
        <ul class="tabs">
          {SECTIONS.map(([id, label]) => (
            <li key={id}>
              <Link href={`/admin/${id}`} aria-current={section === id ? 'page' : undefined}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {section === 'health' && <Health session={session} />}
      {section === 'users' && <Users session={session} />}
      {section === 'organizations' && <Organizations session={session} />}
      {section === 'environments' && <Environments session={session} />}
      {section === 'scm' && <AdminScm session={session} />}
      {section === 'events' && <AdminEvents session={session} />}
      {!SECTIONS.some(([id]) => id === section) && <p>No such section.</p>}
    </>
  );
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return [d && `${d} d`, (d || h) && `${h} h`, `${m} min`].filter(Boolean).join(' ');
}

function Health({ session }: { session: SignedIn }) {
  const status = useLoad(() => session.client.adminStatus(), [session]);
  // The numbers move: read them again every 10 seconds while the section is open.
  useEffect(() => {
    const t = setInterval(status.reload, 10_000);
    return () => clearInterval(t);
  }, []);
  return (
    <section aria-labelledby="health">
      <h2 id="health">Cluster health</h2>
      <Show loaded={status} label="the cluster status">
        {(s) => (
          <dl class="kv" data-testid="cluster-status">
            <dt>Version</dt>
            <dd>{s.version}</dd>
            <dt>Database</dt>
            <dd>{s.database}</dd>
            <dt>Blob store</dt>
            <dd>{s.blob_store}</dd>
            <dt>Builds queued</dt>
            <dd>{s.builds.queued}</dd>
            <dt>Builds running</dt>
            <dd>{s.builds.running}</dd>
            <dt>Warm runners</dt>
            <dd>{s.runners.warm}</dd>
            <dt>Calls per minute</dt>
            <dd>{s.calls_per_minute}</dd>
            <dt>Up for</dt>
            <dd>{duration(s.uptime_seconds)}</dd>
          </dl>
        )}
      </Show>
    </section>
  );
}

function Users({ session }: { session: SignedIn }) {
  const users = useLoad(() => collect(session.client.users.all({ limit: 100 })), [session]);
  return (
    <>
      <NewUser session={session} onCreated={users.reload} />
      <UserList session={session} users={users} />
    </>
  );
}

const NO_USER = { username: '', email: '', fullname: '', password: '' };

function NewUser({ session, onCreated }: { session: SignedIn; onCreated: () => void }) {
  const { values: v, set, update } = useFields(NO_USER);
  const problems = useProblems();
  const [created, setCreated] = useState<string | null>(null);
  const problem = nameProblem(v.username, 30);
  const create = useAction(async () => {
    setCreated(null);
    const { username, email, fullname, password } = v;
    await session.client.users.create({ username, email, ...(fullname ? { fullname } : {}), ...(password ? { password } : {}) });
    setCreated(username);
    update(NO_USER);
    problems.hide();
    onCreated();
  });
  return (
    <section aria-labelledby="new-user">
      <h2 id="new-user">Create a user</h2>
      <Form onSubmit={() => problems.submit(problem, () => void create.run())}>
        <div class="grid-2">
          <div>
            <TextField label="Username" error={problems.shown(problem)} value={v.username} onValue={set('username')} autoComplete="off" />
            <Field label="Email">
              {(p) => <input {...p} type="email" value={v.email} onInput={(e) => set('email')(e.currentTarget.value)} autoComplete="off" />}
            </Field>
          </div>
          <div>
            <TextField label="Full name" value={v.fullname} onValue={set('fullname')} autoComplete="off" />
            <PasswordField
              label="Password"
              hint="The user signs in with it and changes it in their account settings. Leave empty to sign in with keys only."
              autoComplete="new-password"
              value={v.password}
              onValue={set('password')}
            />
          </div>
        </div>
        <ErrorText error={create.error} />
        {created && (
          <p class="success" role="status">
            Created {created}.
          </p>
        )}
        <Busy type="submit" busy={create.busy}>
          Create user
        </Busy>
      </Form>
    </section>
  );
}

function UserList({ session, users }: { session: SignedIn; users: Loaded<User[]> }) {
  const remove = useAction(async (name: string) => {
    await session.client.users.delete(name);
    users.reload();
  });
  return (
    <section aria-labelledby="user-list">
      <h2 id="user-list">Users</h2>
      <Show loaded={users} label="users">
        {(list) => (
          <Table
            rows={list}
            rowKey={(u) => u.id}
            columns={[
              { header: 'Username', cell: (u) => u.username },
              { header: 'Name', cell: (u) => u.fullname || <span class="muted">—</span> },
              { header: 'Email', cell: (u) => u.email || <span class="muted">—</span> },
              {
                header: 'Delete',
                cell: (u) =>
                  u.username === session.me.username ? (
                    <span class="muted">you</span>
                  ) : (
                    <ConfirmButton
                      label={`Delete ${u.username}`}
                      question={<p>Delete the account {u.username}, its keys, algorithms and data?</p>}
                      confirmText={u.username}
                      onConfirm={() => remove.run(u.username)}
                      busy={remove.busy}
                      error={remove.error}
                    />
                  ),
              },
            ]}
          />
        )}
      </Show>
    </section>
  );
}

function Organizations({ session }: { session: SignedIn }) {
  const c = session.client;
  const orgs = useLoad(() => collect(c.organizations.all({ limit: 100 })), [session]);
  const remove = useAction(async (name: string) => {
    await c.organizations.delete(name);
    orgs.reload();
  });
  return (
    <section aria-labelledby="orgs">
      <h2 id="orgs">Organizations</h2>
      <Show loaded={orgs} label="organizations">
        {(list) => (
          <Table
            rows={list}
            rowKey={(o) => o.id}
            empty="No organizations."
            columns={[
              { header: 'Name', cell: (o) => <Link href={`/organizations/${o.org_name}`}>{o.org_name}</Link> },
              { header: 'Display name', cell: (o) => o.org_label },
              { header: 'Contact', cell: (o) => o.org_email || <span class="muted">—</span> },
              {
                header: 'Delete',
                cell: (o) => (
                  <ConfirmButton
                    label={`Delete ${o.org_name}`}
                    question={<p>Delete the organization {o.org_name}?</p>}
                    confirmText={o.org_name}
                    onConfirm={() => remove.run(o.org_name)}
                    busy={remove.busy}
                    error={remove.error}
                  />
                ),
              },
            ]}
          />
        )}
      </Show>
    </section>
  );
}

function Environments({ session }: { session: SignedIn }) {
  const c = session.client;
  const envs = useLoad(async () => {
    const languages = await c.environments.languages();
    return (
      await Promise.all(
        languages.map(async (l) => (await c.environments.list(l.name)).map((e) => ({ ...e, languageName: l.display_name }))),
      )
    ).flat();
  }, [session]);
  return (
    <section aria-labelledby="envs">
      <h2 id="envs">Environments</h2>
      <p class="hint">From the catalog (packages/server/catalog/environments.json); ids are this cluster's own.</p>
      <Show loaded={envs} label="environments">
        {(list) => (
          <Table
            rows={list}
            rowKey={(e) => e.id}
            columns={[
              {
                header: 'Environment',
                cell: (e) => (
                  <>
                    {e.display_name}
                    <div class="muted">{e.name}</div>
                  </>
                ),
              },
              { header: 'Language', cell: (e) => e.languageName },
              { header: 'Machine', cell: (e) => e.machine_type },
              { header: 'Runtime', class: 'wide', cell: (e) => `${e.runtime.name} ${e.runtime.version}` },
              { header: 'Id', class: 'wide', cell: (e) => <code>{e.id}</code> },
              { header: 'Created', class: 'wide', cell: (e) => <Time iso={e.created_at} /> },
            ]}
          />
        )}
      </Show>
    </section>
  );
}
