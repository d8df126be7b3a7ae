import { useEffect, useState } from 'preact/hooks';
import { collect, type Algorithm, type Build } from '@algohost/client';
import { Form } from '../forms.js';
import { Link } from '../router.js';
import { myOrganizations, type SignedIn } from '../session.js';
import { Busy, ErrorText, Field, Show, StatusBadge, Time, useAction, useLoad, useTitle } from '../ui.js';

interface RecentBuild extends Build {
  owner: string;
  name: string;
}

/** My algorithms and my organizations' algorithms, their recent builds, and Explore. */
export function DashboardPage({ session }: { session: SignedIn }) {
  useTitle('Dashboard');
  const c = session.client;
  const mine = useLoad(async () => {
    const owners = [session.me.username, ...myOrganizations(session)];
    const lists = await Promise.all(
      owners.map(async (owner) => ({ owner, algorithms: await collect(c.algorithms.all(owner, { limit: 100 })) })),
    );
    return lists;
  }, [session]);
  const builds = useLoad(async () => {
    const lists = mine.data ?? [];
    const algorithms = lists
      .flatMap((l) => l.algorithms.map((a) => ({ owner: l.owner, a })))
      .sort((x, y) => y.a.updated_at.localeCompare(x.a.updated_at))
      .slice(0, 12);
    const pages = await Promise.all(
      algorithms.map(async ({ owner, a }) =>
        (await c.builds.list(owner, a.name, { limit: 3 })).results.map((b) => ({ ...b, owner, name: a.name })),
      ),
    );
    return pages
      .flat()
      .sort((x, y) => y.created_at.localeCompare(x.created_at))
      .slice(0, 10) as RecentBuild[];
  }, [mine.data]);

  return (
    <>
      <div class="page-head">
        <h1>Dashboard</h1>
        <Link href="/create" class="button">
          Create algorithm
        </Link>
      </div>
      <div class="grid-2">
        <section aria-labelledby="mine">
          <h2 id="mine">Your algorithms</h2>
          <Show loaded={mine} label="your algorithms">
            {(lists) =>
              lists.map((l) => (
                <div key={l.owner} class="owner-group">
                  <h3>{l.owner === session.me.username ? `${l.owner} (you)` : l.owner}</h3>
                  {l.algorithms.length === 0 ? (
                    <p class="muted">
                      No algorithms yet. <Link href={`/create?owner=${encodeURIComponent(l.owner)}`}>Create one</Link>.
                    </p>
                  ) : (
                    <AlgorithmList algorithms={l.algorithms} owner={l.owner} />
                  )}
                </div>
              ))
            }
          </Show>
        </section>
        <section aria-labelledby="builds">
          <h2 id="builds">Recent builds</h2>
          {mine.data ? (
            <Show loaded={builds} label="recent builds">
              {(list) =>
                list.length === 0 ? (
                  <p class="muted">No builds yet: a git push to an algorithm's repository builds it.</p>
                ) : (
                  <ul class="rows">
                    {list.map((b) => (
                      <li key={b.build_id}>
                        <Link href={`/algorithms/${b.owner}/${b.name}/builds?build=${b.build_id}`}>
                          {b.owner}/{b.name}
                        </Link>{' '}
                        <StatusBadge status={b.status} /> <code>{b.commit_sha.slice(0, 8)}</code> <Time iso={b.created_at} />
                      </li>
                    ))}
                  </ul>
                )
              }
            </Show>
          ) : (
            <p class="muted">Loading recent builds…</p>
          )}
        </section>
      </div>
      <Explore session={session} />
    </>
  );
}

function AlgorithmList({ algorithms, owner }: { algorithms: Algorithm[]; owner: string }) {
  return (
    <ul class="cards">
      {algorithms.map((a) => (
        <li key={a.id} class="card">
          <Link href={`/algorithms/${owner}/${a.name}`}>
            <strong>{a.details.label || a.name}</strong>
          </Link>
          <span class="muted">
            {' '}
            {owner}/{a.name}
          </span>
          {a.details.summary && <p>{a.details.summary}</p>}
          <p class="meta">
            {a.version_info?.semantic_version ? `v${a.version_info.semantic_version}` : 'unpublished'} · {a.settings.algorithm_callability}
            {a.build ? (
              <>
                {' '}
                · build <StatusBadge status={a.build.status} />
              </>
            ) : null}
          </p>
        </li>
      ))}
    </ul>
  );
}

/** Public algorithms, searched by name, label or summary. */
function Explore({ session }: { session: SignedIn }) {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<{ items: Algorithm[]; marker: string | null } | null>(null);
  const search = useAction(async (more: boolean) => {
    const page = await session.client.searchAlgorithms({ query, limit: 20, marker: more ? (results?.marker ?? undefined) : undefined });
    setResults({ items: more && results ? [...results.items, ...page.results] : page.results, marker: page.marker });
  });
  useEffect(() => {
    void search.run(false);
    // The first search runs once, on arrival.
  }, []);
  return (
    <section aria-labelledby="explore">
      <h2 id="explore">Explore public algorithms</h2>
      <Form class="inline" role="search" onSubmit={() => void search.run(false)}>
        <Field label="Search">
          {(p) => (
            <input
              {...p}
              type="search"
              value={query}
              onInput={(e) => setQuery(e.currentTarget.value)}
              placeholder="name, label or summary"
            />
          )}
        </Field>
        <Busy type="submit" busy={search.busy}>
          Search
        </Busy>
      </Form>
      <ErrorText error={search.error} />
      {results &&
        (results.items.length === 0 ? (
          <p class="muted">No public algorithms match.</p>
        ) : (
          <>
            <ul class="cards">
              {results.items.map((a) => (
                <li key={a.id} class="card">
                  <Link href={`/algorithms/${a.owner}/${a.name}`}>
                    <strong>{a.details.label || a.name}</strong>
                  </Link>
                  <span class="muted">
                    {' '}
                    {a.owner}/{a.name}
                  </span>
                  {a.details.summary && <p>{a.details.summary}</p>}
                </li>
              ))}
            </ul>
            {results.marker && (
              <Busy type="button" class="secondary" busy={search.busy} onClick={() => void search.run(true)}>
                More
              </Busy>
            )}
          </>
        ))}
    </section>
  );
}
