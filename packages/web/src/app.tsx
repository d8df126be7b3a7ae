/**
 * The app's frame: resumes the tab's session, shows the sign-in page without one, and otherwise
 * the header, navigation and the page the path names.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { Link, matchRoute, navigate, useLocation } from './router.js';
import { currentSession, endSession, onSessionChange, resume, type SignedIn } from './session.js';
import { SignInPage } from './pages/sign-in.js';
import { DashboardPage } from './pages/dashboard.js';
import { CreateAlgorithmPage } from './pages/create-algorithm.js';
import { AlgorithmPage } from './pages/algorithm.js';
import { DataPage } from './pages/data.js';
import { AccountPage } from './pages/account.js';
import { OrganizationsPage, OrganizationPage } from './pages/organizations.js';
import { AdminPage } from './pages/admin.js';

// The tab's session is checked (whoami) while the first render happens, not after it.
const resuming = resume();

function useSession(): { session: SignedIn | null; ready: boolean } {
  const [session, setSession] = useState<SignedIn | null>(currentSession());
  const [ready, setReady] = useState(false);
  useEffect(() => {
    const off = onSessionChange(() => setSession(currentSession()));
    void resuming.finally(() => {
      setSession(currentSession());
      setReady(true);
    });
    return off;
  }, []);
  return { session, ready };
}

interface Route {
  pattern: string;
  render: (s: SignedIn, p: Record<string, string>) => ComponentChildren;
  admin?: boolean;
}

const ROUTES: Route[] = [
  { pattern: '/', render: (s) => <DashboardPage session={s} /> },
  { pattern: '/create', render: (s) => <CreateAlgorithmPage session={s} /> },
  {
    pattern: '/algorithms/:owner/:name/:tab?',
    render: (s, p) => <AlgorithmPage session={s} owner={p.owner!} name={p.name!} tab={p.tab ?? 'overview'} />,
  },
  { pattern: '/data/*', render: (s, p) => <DataPage session={s} path={p['*'] ?? ''} /> },
  { pattern: '/data', render: (s) => <DataPage session={s} path="" /> },
  { pattern: '/account/:tab?', render: (s, p) => <AccountPage session={s} tab={p.tab ?? 'profile'} /> },
  { pattern: '/organizations', render: (s) => <OrganizationsPage session={s} /> },
  { pattern: '/organizations/:org', render: (s, p) => <OrganizationPage session={s} org={p.org!} /> },
  { pattern: '/admin/:section?', admin: true, render: (s, p) => <AdminPage session={s} section={p.section ?? 'health'} /> },
];

export function App() {
  const { session, ready } = useSession();
  const { path } = useLocation();

  if (!ready)
    return (
      <main id="main" class="center">
        <p aria-busy="true">Loading…</p>
      </main>
    );
  if (!session) return <SignInPage />;

  let page: ComponentChildren = <NotFound />;
  for (const r of ROUTES) {
    const params = matchRoute(r.pattern, path);
    if (!params) continue;
    // The admin panel is not offered to others; the API refuses them anyway.
    page = r.admin && !session.me.admin ? <NotFound /> : r.render(session, params);
    break;
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Header session={session} path={path} />
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

function Header({ session, path }: { session: SignedIn; path: string }) {
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  const items: [string, string][] = [
    ['/', 'Dashboard'],
    ['/create', 'Create'],
    ['/data', 'Data'],
    ['/organizations', 'Organizations'],
    ['/account', 'Account'],
  ];
  if (session.me.admin) items.push(['/admin', 'Admin']);
  const current = (href: string) => (href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`));
  return (
    <header class="top">
      <Link href="/" class="brand">
        algohost
      </Link>
      <button type="button" class="menu-toggle secondary small" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
        Menu
      </button>
      <nav id="nav" aria-label="Main" class={open ? 'open' : ''}>
        <ul>
          {items.map(([href, label]) => (
            <li key={href}>
              <Link href={href} aria-current={current(href) ? 'page' : undefined}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
        <div class="who">
          <span>
            {session.me.username}
            {session.me.admin ? ' (admin)' : ''}
            {session.stored.kind === 'key' ? ' · API key' : ''}
          </span>
          <button
            type="button"
            class="secondary small"
            onClick={() => {
              endSession();
              navigate('/', { replace: true });
            }}
          >
            Sign out
          </button>
        </div>
      </nav>
    </header>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is nothing here. <Link href="/">Back to the dashboard</Link>.
      </p>
    </section>
  );
}
