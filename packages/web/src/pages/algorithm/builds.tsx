import { useEffect, useRef, useState } from 'preact/hooks';
import type { Build } from '@algohost/client';
import { navigate, useLocation } from '../../router.js';
import { Busy, ErrorText, messageOf, StatusBadge, Time, useAction } from '../../ui.js';
import type { TabProps } from '../algorithm.js';

/** What started a build, as the Builds table says it. */
const TRIGGERS: Record<Build['trigger'], string> = { push: 'push', sync: 'sync', compile: 'built again' };

const running = (b: Build) => b.status === 'queued' || b.status === 'in-progress';

/**
 * The builds of the algorithm, refreshed while the tab is open (a push from a terminal shows
 * up here), and the log of the chosen one: followed live through the SSE stream while the
 * build runs, read whole once it has finished.
 */
export function BuildsTab({ session, algorithm: a, reload }: TabProps) {
  const c = session.client;
  const { query } = useLocation();
  const [builds, setBuilds] = useState<Build[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const picked = query.get('build');

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const refresh = async () => {
      try {
        const page = await c.builds.list(a.owner, a.name, { limit: 20 });
        if (!live) return;
        setBuilds(page.results);
        setError(null);
      } catch (err) {
        if (live) setError(messageOf(err));
      }
      // Polling is the only way to learn of a push made elsewhere; once a second while visible.
      if (live) timer = setTimeout(refresh, document.hidden ? 5000 : 1000);
    };
    void refresh();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [a.id]);

  // Without a choice, show the newest build (a running one first).
  const selected = builds ? (builds.find((b) => b.build_id === picked) ?? builds.find(running) ?? builds[0]) : undefined;
  const rebuild = useAction(async () => {
    await c.algorithms.compile(a.owner, a.name);
    reload();
  });

  return (
    <div class="grid-2">
      <section aria-labelledby="build-list">
        <div class="page-head">
          <h2 id="build-list">Builds</h2>
          <Busy type="button" class="secondary small" busy={rebuild.busy} onClick={() => void rebuild.run()}>
            Build the head again
          </Busy>
        </div>
        <ErrorText error={rebuild.error} />
        <ErrorText error={error} />
        {builds === null && !error && <p class="muted">Loading builds…</p>}
        {builds?.length === 0 && <p class="muted">No builds yet: push to the repository (see the Source tab) to build it.</p>}
        {builds && builds.length > 0 && (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <caption class="muted">Newest first; this list refreshes by itself.</caption>
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Commit</th>
                  <th scope="col" class="wide">
                    Trigger
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col">Log</th>
                </tr>
              </thead>
              <tbody>
                {builds.map((b) => (
                  <BuildRow
                    key={b.build_id}
                    build={b}
                    current={b.build_id === selected?.build_id}
                    onShow={() => navigate(`/algorithms/${a.owner}/${a.name}/builds?build=${b.build_id}`, { replace: true })}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="build-log">
        <h2 id="build-log">Log</h2>
        {selected ? <BuildLog session={session} owner={a.owner} name={a.name} build={selected} /> : <p class="muted">No build chosen.</p>}
      </section>
    </div>
  );
}

function BuildRow({ build: b, current, onShow }: { build: Build; current: boolean; onShow: () => void }) {
  return (
    <tr aria-current={current ? 'true' : undefined}>
      <td>
        <StatusBadge status={b.status} />
      </td>
      <td>
        <code>{b.commit_sha.slice(0, 8)}</code>
      </td>
      <td class="wide">{TRIGGERS[b.trigger]}</td>
      <td>
        <Time iso={b.started_at ?? b.created_at} />
      </td>
      <td>
        <button type="button" class="secondary small" aria-label={`Show the log of build ${b.build_id.slice(0, 8)}`} onClick={onShow}>
          Show
        </button>
      </td>
    </tr>
  );
}

function BuildLog({ session, owner, name, build }: { session: TabProps['session']; owner: string; name: string; build: Build }) {
  const [text, setText] = useState('');
  const [source, setSource] = useState<'stream' | 'final' | null>(null);
  const [finished, setFinished] = useState<Build | null>(null);
  const [error, setError] = useState<string | null>(null);
  const pre = useRef<HTMLPreElement>(null);
  const isRunning = running(build);

  useEffect(() => {
    const abort = new AbortController();
    setText('');
    setError(null);
    setFinished(null);
    (async () => {
      if (isRunning) {
        setSource('stream');
        // The stream replays the log from the start of the build, then follows it.
        for await (const ev of session.client.builds.follow(owner, name, build.build_id, { signal: abort.signal })) {
          if (ev.type === 'log') setText((t) => t + ev.text);
          else setFinished(ev.build);
        }
      } else {
        setSource('final');
        setText(await session.client.builds.logs(owner, name, build.build_id));
      }
    })().catch((err: unknown) => {
      if (!abort.signal.aborted) setError(messageOf(err));
    });
    return () => abort.abort();
    // A build that finishes keeps its streamed log: only another build restarts this.
  }, [build.build_id]);

  useEffect(() => {
    const el = pre.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [text]);

  const status = finished?.status ?? build.status;
  return (
    <div>
      <p>
        Build <code>{build.build_id.slice(0, 8)}</code> of <code>{build.commit_sha.slice(0, 8)}</code>: <StatusBadge status={status} />
        {source === 'stream' && !finished && <span class="muted"> · following live</span>}
      </p>
      {build.error && <p class="error">{build.error}</p>}
      <ErrorText error={error} />
      <pre class="log" ref={pre} tabIndex={0} aria-label="Build log" aria-live="off" data-source={source ?? undefined} data-status={status}>
        {text || (isRunning ? 'Waiting for output…' : '')}
      </pre>
    </div>
  );
}
