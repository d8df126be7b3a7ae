/**
 * The admin panel's source-control section: the configurations (the internal SCM first), a form
 * for a new external one with the OAuth application registered at the provider (its client
 * secret is write-only: sent once, never shown again), and per configuration enable or disable,
 * make default and delete.
 */
import { useState } from 'preact/hooks';
import type { ScmConfig, ScmConfigInput } from '@algohost/client';
import { Checkbox, Form, PasswordField, SelectField, TextField, useFields } from '../forms.js';
import type { SignedIn } from '../session.js';
import { Busy, ConfirmButton, ErrorText, Field, Show, useAction, useLoad } from '../ui.js';
import { PROVIDERS, scmLabel } from './account-scm.js';

const EXTERNAL: [Provider, string][] = [
  ['github', 'GitHub (github.com or GitHub Enterprise Server)'],
  ['gitlab', 'GitLab (gitlab.com or self-managed)'],
  ['bitbucket', 'Bitbucket Cloud'],
  ['gitea', 'Gitea or Forgejo'],
];

export function AdminScm({ session }: { session: SignedIn }) {
  const configs = useLoad(() => session.client.scms.list(), [session]);
  // The internal SCM's address is the server's public URL, the one the callback is built on
  // (which may differ from the address this browser used).
  const publicUrl = configs.data?.find((x) => x.provider === 'internal')?.urls.web ?? location.origin;
  return (
    <>
      <NewScm session={session} callback={`${publicUrl}/v1/scms/oauth/callback`} onCreated={configs.reload} />
      <section aria-labelledby="scm-list">
        <h2 id="scm-list">Source control configurations</h2>
        <Show loaded={configs} label="the configurations">
          {(list) => (
            <ul class="rows scm-list">
              {list.map((config) => (
                <ConfigRow key={config.id} session={session} config={config} onChanged={configs.reload} />
              ))}
            </ul>
          )}
        </Show>
      </section>
    </>
  );
}

type Provider = NonNullable<ScmConfigInput['provider']>;

/** What the form forgets once a configuration is added (the secret above all). */
const NO_ADDRESSES = { web: '', apiUrl: '', ssh: '', clientId: '', secret: '' };

function NewScm({ session, callback, onCreated }: { session: SignedIn; callback: string; onCreated: () => void }) {
  const { values: v, set, update } = useFields({ provider: 'github' as Provider, ...NO_ADDRESSES, enabled: true, makeDefault: false });
  const [created, setCreated] = useState<string | null>(null);
  const create = useAction(async () => {
    setCreated(null);
    const config = await session.client.scms.create({
      provider: v.provider,
      enabled: v.enabled,
      default: v.makeDefault,
      urls: { web: v.web.trim(), ...(v.apiUrl.trim() ? { api: v.apiUrl.trim() } : {}), ...(v.ssh.trim() ? { ssh: v.ssh.trim() } : {}) },
      oauth: { client_id: v.clientId.trim(), client_secret: v.secret },
    });
    // The secret leaves the page with the request: the form forgets it.
    update(NO_ADDRESSES);
    setCreated(scmLabel(config));
    onCreated();
  });
  return (
    <section aria-labelledby="new-scm">
      <h2 id="new-scm">Add a source-control provider</h2>
      <p class="hint">
        First register an OAuth application at the provider with the callback (redirect) URL <code>{callback}</code>, then enter its client
        id and secret here. Users authorize it under Account, Settings tab, Source Code Management.
      </p>
      <Form onSubmit={() => void create.run()}>
        <div class="grid-2">
          <div>
            <SelectField label="Provider" value={v.provider} onValue={(p) => set('provider')(p as Provider)} options={EXTERNAL} />
            <Field label="Web address" hint="Where users sign in, e.g. https://github.com or https://gitea.example.org.">
              {(p) => <input {...p} type="url" required value={v.web} onInput={(e) => set('web')(e.currentTarget.value)} />}
            </Field>
            <Field label="API address (optional)" hint="Left empty: the provider's usual API address for that web address.">
              {(p) => <input {...p} type="url" value={v.apiUrl} onInput={(e) => set('apiUrl')(e.currentTarget.value)} />}
            </Field>
            <TextField
              label="SSH address (optional)"
              hint="Left empty: ssh://git@ and the web address's host."
              value={v.ssh}
              onValue={set('ssh')}
            />
          </div>
          <div>
            <TextField label="OAuth client id" required autoComplete="off" value={v.clientId} onValue={set('clientId')} />
            <PasswordField
              label="OAuth client secret"
              hint="Stored encrypted; never shown again."
              required
              autoComplete="new-password"
              value={v.secret}
              onValue={set('secret')}
            />
            <Checkbox checked={v.enabled} onValue={set('enabled')}>
              Enabled: may back new algorithms
            </Checkbox>
            <Checkbox checked={v.makeDefault} onValue={set('makeDefault')}>
              Default: offered first when creating an algorithm
            </Checkbox>
          </div>
        </div>
        <ErrorText error={create.error} />
        {created && (
          <p class="success" role="status">
            {created} added.
          </p>
        )}
        <Busy type="submit" busy={create.busy}>
          Add provider
        </Busy>
      </Form>
    </section>
  );
}

function ConfigRow({ session, config: s, onChanged }: { session: SignedIn; config: ScmConfig; onChanged: () => void }) {
  const c = session.client;
  const label = s.provider === 'internal' ? "algohost's own Git server" : scmLabel(s);
  const update = useAction(async (input: ScmConfigInput) => {
    await c.scms.update(s.id, input);
    onChanged();
  });
  const remove = useAction(async () => {
    await c.scms.delete(s.id);
    onChanged();
  });
  return (
    <li data-testid="scm-config">
      <div>
        <h3>{label}</h3>
        <p class="muted">
          {PROVIDERS[s.provider] ?? s.provider} · {s.urls.web}
          {s.oauth ? (
            <>
              {' '}
              · client <code>{s.oauth.client_id}</code>
            </>
          ) : null}
        </p>
        <p class="muted">
          id <code>{s.id}</code>
          {s.default ? ' · default' : ''}
          {' · '}
          <span class={`badge ${s.enabled ? 'status-succeeded' : 'status-failed'}`}>{s.enabled ? 'enabled' : 'disabled'}</span>
        </p>
        <ErrorText error={update.error} />
      </div>
      {s.provider !== 'internal' && (
        <div class="actions">
          <Busy type="button" class="secondary small" busy={update.busy} onClick={() => void update.run({ enabled: !s.enabled })}>
            {s.enabled ? `Disable ${s.name}` : `Enable ${s.name}`}
          </Busy>
          <Busy type="button" class="secondary small" busy={update.busy} onClick={() => void update.run({ default: !s.default })}>
            {s.default ? `Stop offering ${s.name} first` : `Make ${s.name} the default`}
          </Busy>
          <ConfirmButton
            label={`Delete ${s.name}`}
            question={
              <p>
                Delete the configuration {label}? Users' authorizations of it go with it. A configuration that backs algorithms cannot be
                deleted: disable it instead.
              </p>
            }
            confirmText={s.name}
            onConfirm={() => remove.run()}
            busy={remove.busy}
            error={remove.error}
          />
        </div>
      )}
    </li>
  );
}
