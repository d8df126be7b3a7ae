/**
 * The account's Settings tab, section Source Code Management: each enabled external configuration with the
 * provider's answer about this account's token (endpoint 1), Authorize (after the user confirms
 * which external service gets access) and Revoke. Authorizing leaves the app for the provider's
 * consent page; the server's callback brings the browser back to /account/settings with the outcome in
 * the query (`scm`, `scm_status`, `scm_error`), which is shown here once.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ScmConfig } from '@algohost/client';
import { Form } from '../forms.js';
import { navigate, useLocation } from '../router.js';
import type { SignedIn } from '../session.js';
import { Busy, ConfirmButton, Dialog, ErrorText, Show, useAction, useLoad } from '../ui.js';

export const PROVIDERS: Record<string, string> = {
  github: 'GitHub',
  gitlab: 'GitLab',
  bitbucket: 'Bitbucket',
  gitea: 'Gitea',
  internal: 'algohost',
};

/** How the UI names a configuration to its user: its name ("Team Gitea"), the provider's when it has none. */
export function scmLabel(c: ScmConfig): string {
  return c.name || (PROVIDERS[c.provider] ?? c.provider);
}

export function AccountScm({ session }: { session: SignedIn }) {
  const { query } = useLocation();
  const configs = useLoad(async () => (await session.client.scms.list()).filter((c) => c.provider !== 'internal' && c.enabled), [session]);
  const returned = query.get('scm');
  const outcome = query.get('scm_status');
  const returnedConfig = configs.data?.find((c) => c.id === returned);
  const returnedName = returnedConfig ? scmLabel(returnedConfig) : 'the source-control provider';
  // Back from the provider: the outcome is at the bottom of a long page, so bring it into view.
  const listed = configs.data !== undefined;
  useEffect(() => {
    if (returned && outcome && listed) document.getElementById('scm')?.scrollIntoView();
  }, [returned, outcome, listed]);
  return (
    <section aria-labelledby="scm">
      <h2 id="scm">Source Code Management</h2>
      <p>
        Authorize an external source-control provider that a cluster admin configured, so that new algorithms can keep their source there
        instead of in algohost's own Git server. algohost then acts as your account at that provider to create an algorithm's repository,
        push its first commit and register a webhook.
      </p>
      {returned && outcome && (
        <div class="outcome" data-testid="scm-outcome">
          {outcome === 'authorized' ? (
            <p class="success" role="status">
              {returnedName} is authorized.
            </p>
          ) : (
            <ErrorText error={`Authorizing ${returnedName} did not work: ${query.get('scm_error') || 'the provider refused it'}.`} />
          )}
          <button type="button" class="secondary small" onClick={() => navigate('/account/settings', { replace: true })}>
            Dismiss
          </button>
        </div>
      )}
      <Show loaded={configs} label="the source-control configurations">
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No external source-control configuration is enabled on this cluster.</p>
          ) : (
            <ul class="rows scm-list">
              {list.map((c) => (
                <ScmRow key={c.id} session={session} config={c} />
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

function ScmRow({ session, config: c }: { session: SignedIn; config: ScmConfig }) {
  const status = useLoad(() => session.client.scms.tokenStatus(c.id), [c.id]);
  const [asking, setAsking] = useState(false);
  const label = scmLabel(c);
  const authorize = useAction(async () => {
    const started = await session.client.scms.authorize(c.id, '/account/settings');
    // A full navigation: the provider's consent page, then the server's callback, then back here.
    location.assign(started.authorize_url);
  });
  const revoke = useAction(async () => {
    await session.client.scms.revoke(c.id);
    status.reload();
  });
  const authorized = status.data?.authorization_status === 'authorized';
  return (
    <li data-testid="scm-config">
      <div>
        <h3>{label}</h3>
        <p class="muted">
          {PROVIDERS[c.provider] ?? c.provider} at{' '}
          <a href={c.urls.web} rel="noreferrer">
            {c.urls.web}
          </a>{' '}
          · configuration <code>{c.id}</code>
          {c.default ? ' · default' : ''}
        </p>
        <Show loaded={status} label={`the authorization status of ${label}`}>
          {(s) =>
            s.authorization_status === 'authorized' ? (
              <p>
                <span class="badge status-succeeded">authorized</span> as <strong>{s.scm_username}</strong>
                {s.scm_organizations.length > 0 &&
                  ` · organizations: ${s.scm_organizations.map((o) => `${o.scm_org_username}${o.access_level === 'MEMBER' ? '' : ' (read only)'}`).join(', ')}`}
              </p>
            ) : (
              <p>
                <span class="badge status-failed">unauthorized</span>
                {s.scm_username ? ` · last authorized as ${s.scm_username}; the provider no longer accepts that token` : ''}
              </p>
            )
          }
        </Show>
      </div>
      <div class="actions">
        <button type="button" onClick={() => setAsking(true)}>
          {authorized ? `Authorize ${label} again` : `Authorize ${label}`}
        </button>
        {authorized && (
          <ConfirmButton
            label={`Revoke ${label}`}
            question={
              <p>
                Revoke algohost's access to your account at {label}? Algorithms you host there stop building from new pushes until you
                authorize it again.
              </p>
            }
            onConfirm={() => revoke.run()}
            busy={revoke.busy}
            error={revoke.error}
          />
        )}
      </div>
      <Dialog title={`Authorize ${label}?`} open={asking} onClose={() => setAsking(false)}>
        <Form method="dialog" onSubmit={() => void authorize.run()}>
          <p>
            You are about to let algohost act as your account at the external service <strong>{label}</strong> (<code>{c.urls.web}</code>):
            it will create repositories there, push their first commit and register webhooks.
          </p>
          <p>
            You continue on {c.name}'s own pages to sign in and approve, and come back here afterwards. You can revoke it here at any time.
          </p>
          <ErrorText error={authorize.error} />
          <div class="actions">
            <button type="button" class="secondary" onClick={() => setAsking(false)}>
              Cancel
            </button>
            <Busy type="submit" busy={authorize.busy}>
              Continue to {c.name}
            </Busy>
          </div>
        </Form>
      </Dialog>
    </li>
  );
}
