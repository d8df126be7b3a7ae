/**
 * The admin panel's source-control section: the configurations (the internal SCM first), a form
 * for a new external one with the OAuth application registered at the provider (its client
 * secret is write-only: sent once, never shown again), and per configuration enable or disable,
 * make default and delete.
 */
import { useState } from 'preact/hooks';
import type { ScmConfig, ScmConfigInput } from '@algohost/client';
import type { SignedIn } from '../session.js';
import { Busy, ConfirmButton, ErrorText, Field, Show, useAction, useLoad } from '../ui.js';
import { PROVIDERS, scmLabel } from './account-scm.js';

const EXTERNAL: [NonNullable<ScmConfigInput['provider']>, string][] = [
  ['github', 'GitHub (github.com or GitHub Enterprise Server)'],
  ['gitlab', 'GitLab (gitlab.com or self-managed)'],
  ['bitbucket', 'Bitbucket Cloud'],
  ['gitea', 'Gitea or Forgejo'],
];

export function AdminScm({ session }: { session: SignedIn }) {
  const c = session.client;
  const configs = useLoad(() => c.scms.list(), [session]);
  const [provider, setProvider] = useState<NonNullable<ScmConfigInput['provider']>>('github');
  const [web, setWeb] = useState('');
  const [apiUrl, setApiUrl] = useState('');
  const [ssh, setSsh] = useState('');
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [makeDefault, setMakeDefault] = useState(false);
  const [created, setCreated] = useState<string | null>(null);
  // The internal SCM's address is the server's public URL, the one the callback is built on
  // (which may differ from the address this browser used).
  const publicUrl = configs.data?.find((x) => x.provider === 'internal')?.urls.web ?? location.origin;
  const callback = `${publicUrl}/v1/scms/oauth/callback`;
  const create = useAction(async () => {
    setCreated(null);
    const config = await c.scms.create({
      provider,
      enabled,
      default: makeDefault,
      urls: { web: web.trim(), ...(apiUrl.trim() ? { api: apiUrl.trim() } : {}), ...(ssh.trim() ? { ssh: ssh.trim() } : {}) },
      oauth: { client_id: clientId.trim(), client_secret: secret },
    });
    // The secret leaves the page with the request: the form forgets it.
    setSecret('');
    setClientId('');
    setWeb('');
    setApiUrl('');
    setSsh('');
    setCreated(scmLabel(config));
    configs.reload();
  });
  return (
    <>
      <section aria-labelledby="new-scm">
        <h2 id="new-scm">Add a source-control provider</h2>
        <p class="hint">
          First register an OAuth application at the provider with the callback (redirect) URL <code>{callback}</code>, then enter its
          client id and secret here. Users authorize it under Account, Source Code Management.
        </p>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <div class="grid-2">
            <div>
              <Field label="Provider">
                {(p) => (
                  <select {...p} value={provider} onChange={(e) => setProvider(e.currentTarget.value as typeof provider)}>
                    {EXTERNAL.map(([v, l]) => (
                      <option key={v} value={v}>
                        {l}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              <Field label="Web address" hint="Where users sign in, e.g. https://github.com or https://gitea.example.org.">
                {(p) => <input {...p} type="url" required value={web} onInput={(e) => setWeb(e.currentTarget.value)} />}
              </Field>
              <Field label="API address (optional)" hint="Left empty: the provider's usual API address for that web address.">
                {(p) => <input {...p} type="url" value={apiUrl} onInput={(e) => setApiUrl(e.currentTarget.value)} />}
              </Field>
              <Field label="SSH address (optional)" hint="Left empty: ssh://git@ and the web address's host.">
                {(p) => <input {...p} value={ssh} onInput={(e) => setSsh(e.currentTarget.value)} />}
              </Field>
            </div>
            <div>
              <Field label="OAuth client id">
                {(p) => <input {...p} required autoComplete="off" value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />}
              </Field>
              <Field label="OAuth client secret" hint="Stored encrypted; never shown again.">
                {(p) => (
                  <input
                    {...p}
                    type="password"
                    required
                    autoComplete="new-password"
                    value={secret}
                    onInput={(e) => setSecret(e.currentTarget.value)}
                  />
                )}
              </Field>
              <label class="check">
                <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
                Enabled: may back new algorithms
              </label>
              <label class="check">
                <input type="checkbox" checked={makeDefault} onChange={(e) => setMakeDefault(e.currentTarget.checked)} />
                Default: offered first when creating an algorithm
              </label>
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
        </form>
      </section>
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
