import type { Algorithm } from '@algohost/client';
import { Link } from '../router.js';
import { myOrganizations, type SignedIn } from '../session.js';
import { Show, useLoad, useTitle } from '../ui.js';
import { BuildsTab } from './algorithm/builds.js';
import { EventsTab } from './algorithm/events.js';
import { OverviewTab } from './algorithm/overview.js';
import { RunTab } from './algorithm/run.js';
import { SettingsTab } from './algorithm/settings.js';
import { SourceTab } from './algorithm/source.js';
import { VersionsTab } from './algorithm/versions.js';

/** What every tab gets: the algorithm, whether the viewer manages it, and a way to reload it. */
export interface TabProps {
  session: SignedIn;
  algorithm: Algorithm;
  /** Owner, member of the owning organization, or admin: sees builds, source, settings. */
  manager: boolean;
  reload: () => void;
}

const TABS: [string, string, boolean][] = [
  ['overview', 'Overview', false],
  ['source', 'Source', true],
  ['builds', 'Builds', true],
  ['versions', 'Versions', false],
  ['run', 'Run', false],
  ['events', 'Events', true],
  ['settings', 'Settings', true],
];

export function AlgorithmPage({ session, owner, name, tab }: { session: SignedIn; owner: string; name: string; tab: string }) {
  useTitle(`${owner}/${name}`);
  const loaded = useLoad(async () => {
    const algorithm = await session.client.algorithms.get(owner, name);
    const me = session.me;
    const manager =
      me.admin ||
      algorithm.owner.toLowerCase() === me.username.toLowerCase() ||
      myOrganizations(session).some((o) => o.toLowerCase() === algorithm.owner.toLowerCase());
    return { algorithm, manager };
  }, [session, owner, name]);

  return (
    <Show loaded={loaded} label={`${owner}/${name}`}>
      {({ algorithm, manager }) => {
        const props: TabProps = { session, algorithm, manager, reload: loaded.reload };
        const base = `/algorithms/${algorithm.owner}/${algorithm.name}`;
        const tabs = TABS.filter(([, , managers]) => manager || !managers);
        return (
          <>
            <div class="page-head">
              <div>
                <h1>{algorithm.details.label || algorithm.name}</h1>
                <p class="muted">
                  {algorithm.owner}/{algorithm.name} ·{' '}
                  {algorithm.version_info?.semantic_version ? `v${algorithm.version_info.semantic_version}` : 'not published'} ·{' '}
                  {algorithm.settings.algorithm_callability}
                </p>
              </div>
            </div>
            <nav aria-label="Algorithm">
              <ul class="tabs">
                {tabs.map(([id, label]) => (
                  <li key={id}>
                    <Link href={id === 'overview' ? base : `${base}/${id}`} aria-current={tab === id ? 'page' : undefined}>
                      {label}
                    </Link>
                  </li>
                ))}
              </ul>
            </nav>
            {tab === 'overview' && <OverviewTab {...props} />}
            {tab === 'source' && manager && <SourceTab {...props} />}
            {tab === 'builds' && manager && <BuildsTab {...props} />}
            {tab === 'versions' && <VersionsTab {...props} />}
            {tab === 'run' && <RunTab {...props} />}
            {tab === 'events' && manager && <EventsTab {...props} />}
            {tab === 'settings' && manager && <SettingsTab {...props} />}
            {!tabs.some(([id]) => id === tab) && <p>This tab does not exist, or is only for the algorithm's owners.</p>}
          </>
        );
      }}
    </Show>
  );
}
