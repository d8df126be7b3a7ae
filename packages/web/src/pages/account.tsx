import { useState } from 'preact/hooks';
import type { Capability, CreatedApiKey, Identity } from '@algohost/client';
import { Link } from '../router.js';
import type { SignedIn } from '../session.js';
import { Checkbox, Form, PasswordField, TextField } from '../forms.js';
import { AccountScm } from './account-scm.js';
import { Busy, ConfirmButton, CopyBlock, ErrorText, Field, Show, Table, Time, useAction, useLoad, useTitle } from '../ui.js';

export const CAPABILITIES: [string, string][] = [
  ['manage_algorithms', 'Manage algorithms: create, edit, publish, git push and clone'],
  ['call_algorithms', 'Call algorithms'],
  ['read_data', 'Read hosted data'],
  ['write_data', 'Write hosted data'],
];

const TABS: [string, string][] = [
  ['profile', 'Profile'],
  ['settings', 'Settings'],
];

/**
 * The account profile: its Profile tab (name, email, company) and its Settings tab (password,
 * API keys, and the Source Code Management section, where the specification sends the user to
 * authorize an external provider; error 9003 and the docs say the same).
 */
export function AccountPage({ session, tab }: { session: SignedIn; tab: string }) {
  useTitle(tab === 'settings' ? 'Account settings' : 'Account');
  return (
    <>
      <h1>Account</h1>
      <nav aria-label="Account">
        <ul class="tabs">
          {TABS.map(([id, label]) => (
            <li key={id}>
              <Link href={id === 'profile' ? '/account' : `/account/${id}`} aria-current={tab === id ? 'page' : undefined}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {tab === 'profile' && <ProfileTab session={session} />}
      {tab === 'settings' && (
        <>
          <Password session={session} />
          <Keys session={session} />
          <AccountScm session={session} />
        </>
      )}
      {!TABS.some(([id]) => id === tab) && <p>This tab does not exist.</p>}
    </>
  );
}

function ProfileTab({ session }: { session: SignedIn }) {
  // whoami carries the account's own profile (GET /v1/users/{name} is an admin's lookup); read
  // it afresh here rather than from the session, which was read at sign-in.
  const user = useLoad(() => session.client.whoami(), [session]);
  return (
    <Show loaded={user} label="your profile">
      {(u) => <Profile session={session} user={u} onSaved={user.reload} />}
    </Show>
  );
}

function Profile({ session, user, onSaved }: { session: SignedIn; user: Identity; onSaved: () => void }) {
  const [fullname, setFullname] = useState(user.fullname ?? '');
  const [email, setEmail] = useState(user.email ?? '');
  const [company, setCompany] = useState(user.company_name ?? '');
  const [role, setRole] = useState(user.company_role ?? '');
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await session.client.users.update(user.username, { fullname, email: email || null, company_name: company, company_role: role });
    setSaved(true);
    onSaved();
  });
  return (
    <section aria-labelledby="profile">
      <h2 id="profile">Profile</h2>
      <Form onSubmit={() => void save.run()}>
        <div class="grid-2">
          <div>
            <TextField label="Full name" autoComplete="name" value={fullname} onValue={setFullname} />
            <Field label="Email">
              {(p) => <input {...p} type="email" autoComplete="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />}
            </Field>
          </div>
          <div>
            <TextField label="Company" autoComplete="organization" value={company} onValue={setCompany} />
            <TextField label="Role at the company" autoComplete="organization-title" value={role} onValue={setRole} />
          </div>
        </div>
        <ErrorText error={save.error} />
        {saved && (
          <p class="success" role="status">
            Profile saved.
          </p>
        )}
        <Busy type="submit" busy={save.busy}>
          Save profile
        </Busy>
      </Form>
    </section>
  );
}

function Password({ session }: { session: SignedIn }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [done, setDone] = useState(false);
  const mismatch = again && next !== again ? 'The two new passwords differ.' : null;
  const change = useAction(async () => {
    setDone(false);
    await session.client.users.update(session.me.username, { password: next, current_password: current });
    setCurrent('');
    setNext('');
    setAgain('');
    setDone(true);
  });
  return (
    <section aria-labelledby="password">
      <h2 id="password">Password</h2>
      <Form
        onSubmit={() => {
          if (!mismatch) void change.run();
        }}
      >
        {/* A hidden username lets password managers file the new password under the right account. */}
        <input type="text" name="username" autoComplete="username" value={session.me.username} hidden readOnly />
        <PasswordField
          label="Current password"
          hint="An account that never had a password gets its first one from an admin."
          autoComplete="current-password"
          value={current}
          onValue={setCurrent}
        />
        <PasswordField label="New password" autoComplete="new-password" required value={next} onValue={setNext} />
        <PasswordField label="New password again" error={mismatch} autoComplete="new-password" required value={again} onValue={setAgain} />
        <ErrorText error={change.error} />
        {done && (
          <p class="success" role="status">
            Password changed.
          </p>
        )}
        <Busy type="submit" busy={change.busy}>
          Change password
        </Busy>
      </Form>
    </section>
  );
}

function Keys({ session }: { session: SignedIn }) {
  const c = session.client;
  const me = session.me.username;
  const keys = useLoad(() => c.keys.list(me), [me]);
  const revoke = useAction(async (id: string) => {
    await c.keys.revoke(me, id);
    keys.reload();
  });
  return (
    <section aria-labelledby="keys">
      <h2 id="keys">API keys</h2>
      <NewKey session={session} onCreated={keys.reload} />
      <Show loaded={keys} label="your keys">
        {(list) => (
          <Table
            rows={list}
            rowKey={(k) => k.id}
            empty="No keys."
            columns={[
              {
                header: 'Key',
                cell: (k) => (
                  <>
                    <code>{k.prefix}…</code>
                    {k.kind === 'admin' ? ' (admin)' : ''}
                  </>
                ),
              },
              { header: 'Description', cell: (k) => k.description || <span class="muted">—</span> },
              { header: 'Capabilities', cell: (k) => k.capabilities.join(', ') },
              { header: 'Created', class: 'wide', cell: (k) => <Time iso={k.created_at} /> },
              {
                header: 'Revoke',
                cell: (k) => (
                  <ConfirmButton
                    label={`Revoke ${k.prefix}…`}
                    question={<p>Revoke this key? Whatever uses it stops working at once.</p>}
                    onConfirm={() => revoke.run(k.id)}
                    busy={revoke.busy}
                    error={revoke.error}
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

/** Creating a key with the capabilities ticked; the key is shown once, to copy. */
function NewKey({ session, onCreated }: { session: SignedIn; onCreated: () => void }) {
  const me = session.me.username;
  const [description, setDescription] = useState('');
  const [caps, setCaps] = useState<string[]>(CAPABILITIES.map(([id]) => id));
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const create = useAction(async () => {
    setCreated(await session.client.keys.create(me, { description: description || undefined, capabilities: caps as Capability[] }));
    setDescription('');
    onCreated();
  });
  return (
    <>
      <Form onSubmit={() => void create.run()}>
        <TextField label="Description" hint="What the key is for, e.g. laptop or CI." value={description} onValue={setDescription} />
        <fieldset>
          <legend>Capabilities</legend>
          {CAPABILITIES.map(([id, label]) => (
            <Checkbox
              key={id}
              name="capabilities"
              value={id}
              checked={caps.includes(id)}
              onValue={(on) => setCaps(on ? [...caps, id] : caps.filter((x) => x !== id))}
            >
              {label}
            </Checkbox>
          ))}
          <p class="hint">
            A key with all four is a full credential (keys, profile, organizations); a key can never hold more than the credential that made
            it.
          </p>
        </fieldset>
        <ErrorText error={create.error} />
        <Busy type="submit" busy={create.busy}>
          Create API key
        </Busy>
      </Form>
      {created && (
        <div class="notice" role="status">
          <p>
            <strong>Copy the key now:</strong> it is shown only this once.
          </p>
          <CopyBlock text={created.key} label="New API key" copyLabel="Copy the key" />
          <button type="button" class="secondary small" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
    </>
  );
}
