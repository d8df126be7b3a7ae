import { useState } from 'preact/hooks';
import type { Algorithm, ScmConnectionStatus, ScmSyncResult } from '@algohost/client';
import { cloneCommand, KEY_PLACEHOLDER } from '../../git-help.js';
import type { SignedIn } from '../../session.js';
import { Busy, CopyBlock, ErrorText, Show, Time, useAction, useLoad } from '../../ui.js';
import { scmLabel } from '../account-scm.js';
import type { TabProps } from '../algorithm.js';

/** The Git URL (or the provider's repository), a clone command and the latest commits. */
export function SourceTab({ session, algorithm: a }: TabProps) {
  const commits = useLoad(() => session.client.algorithmCommits(a.owner, a.name, { limit: 20 }), [a.id]);
  return (
    <>
      {a.source ? (
        <ExternalSource session={session} algorithm={a} source={a.source} onSynced={commits.reload} />
      ) : (
        <section aria-labelledby="git">
          <h2 id="git">Repository</h2>
          <p>Source is hosted by algohost's Git server; every push to it builds.</p>
          <CopyBlock text={a.git_url} label="Git URL" />
          <CopyBlock text={cloneCommand(a.git_url, session.me.username, a.name)} label="Clone command" copyLabel="Copy clone command" />
          <p class="hint">
            Replace <code>{KEY_PLACEHOLDER}</code> with an API key holding <code>manage_algorithms</code>; write a <code>/</code> in the key
            as <code>%2F</code>.
          </p>
        </section>
      )}
      <section aria-labelledby="commits">
        <h2 id="commits">Recent commits</h2>
        <Show loaded={commits} label="commits">
          {({ results }) =>
            results.length === 0 ? (
              <p class="muted">No commits.</p>
            ) : (
              <ul class="rows">
                {results.map((c) => (
                  <li key={c.sha}>
                    <code>{c.sha.slice(0, 8)}</code> <span>{c.message.split('\n')[0]}</span>
                    <span class="muted">
                      {c.author_name} · <Time iso={c.committed_at} />
                    </span>
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
    </>
  );
}

const CONNECTION: Record<string, string> = {
  active: 'algohost reaches the repository.',
  unauthorized:
    'The provider no longer accepts the token of the account that created this algorithm: that account authorizes the configuration again under Account, Settings tab, Source Code Management.',
  repository_missing: 'The repository is gone at the provider (deleted, renamed or moved).',
};

/**
 * An algorithm whose source lives at an external provider: where, how it is reached, its last
 * delivery, and "sync now" (which may bring in commits: `onSynced` reloads the list of them).
 */
function ExternalSource({
  session,
  algorithm: a,
  source,
  onSynced,
}: {
  session: SignedIn;
  algorithm: Algorithm;
  source: NonNullable<Algorithm['source']>;
  onSynced: () => void;
}) {
  const c = session.client;
  const status = useLoad(() => c.scms.connectionStatus(a.owner, a.name), [a.id]);
  const [synced, setSynced] = useState<ScmSyncResult | null>(null);
  const sync = useAction(async () => {
    setSynced(null);
    setSynced(await c.scms.sync(a.owner, a.name));
    status.reload();
    onSynced();
  });
  const repo = `${source.repository_owner}/${source.repository_name}`;
  return (
    <section aria-labelledby="git">
      <h2 id="git">Repository at {scmLabel(source.scm)}</h2>
      <p>
        Source lives at{' '}
        <a href={source.repository_web_url || source.repository_https_url} rel="noreferrer">
          {repo} at {source.scm.name}
        </a>
        ; every push there reaches algohost through a webhook and builds here.
      </p>
      <CopyBlock text={source.repository_https_url} label="HTTPS clone URL" />
      <CopyBlock text={source.repository_ssh_url} label="SSH clone URL" />
      <h3>Connection</h3>
      <Show loaded={status} label="the connection status">
        {(s) => (
          <dl class="kv" data-testid="scm-connection">
            <dt>Status</dt>
            <dd>
              <span class={`badge ${s.scm_connection_status === 'active' ? 'status-succeeded' : 'status-failed'}`}>
                {s.scm_connection_status}
              </span>{' '}
              {CONNECTION[s.scm_connection_status]}
            </dd>
            <dt>Last delivery</dt>
            <dd>
              <Delivery d={s.last_delivery ?? source.last_delivery} />
            </dd>
          </dl>
        )}
      </Show>
      <div class="sync">
        <p class="hint">
          If the provider's webhooks cannot reach algohost, sync by hand: algohost fetches main and builds a commit it has not built.
        </p>
        <Busy type="button" class="secondary" busy={sync.busy} onClick={() => void sync.run()}>
          Sync now
        </Busy>
        <ErrorText error={sync.error} />
        {synced && (
          <p class="success" role="status">
            Sync: {synced.result}
            {synced.commit_sha && !synced.result.includes(synced.commit_sha.slice(0, 8))
              ? ` (commit ${synced.commit_sha.slice(0, 8)})`
              : ''}
            {synced.build ? ` · build ${synced.build.status}` : ''}
          </p>
        )}
      </div>
    </section>
  );
}

function Delivery({ d }: { d: ScmConnectionStatus['last_delivery'] }) {
  if (!d) return <span class="muted">None yet.</span>;
  return (
    <>
      <Time iso={d.at} /> by {d.via === 'webhook' ? 'webhook' : 'sync'}
      {d.commit_sha ? (
        <>
          {' '}
          · <code>{d.commit_sha.slice(0, 8)}</code>
        </>
      ) : null}{' '}
      · {d.result}
    </>
  );
}
