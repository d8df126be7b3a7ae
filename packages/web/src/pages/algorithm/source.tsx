import { cloneCommand, KEY_PLACEHOLDER } from '../../git-help.js';
import { CopyBlock, Show, Time, useLoad } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

/** The Git URL, a clone command and the latest commits. */
export function SourceTab({ session, algorithm: a }: TabProps) {
  const commits = useLoad(() => session.client.algorithmCommits(a.owner, a.name, { limit: 20 }), [a.id]);
  return (
    <>
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
