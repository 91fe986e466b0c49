import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, setCsrfToken, whenSignedOut } from './api';
import { ErrorNotice, Link, Loading, Page } from './components';
import { Account, Overview, Parties, Plan, Receipts } from './pages/tenant';
import { SignIn, SignUp } from './pages/auth';
import { Credits } from './pages/credits';
import { Keys } from './pages/keys';
import { CrawlJobs, OperatorCrawlJobs } from './pages/crawl-jobs';
import { Collections } from './pages/operator/collections';
import { Crawl } from './pages/operator/crawl';
import { IndexStats, OperatorOverview, Revenue } from './pages/operator/overview';
import { Pricing } from './pages/operator/pricing';
import { Tenants } from './pages/operator/tenants';
import { Tiers } from './pages/operator/tiers';
import { Usage } from './pages/usage';
import { navigate, usePath } from './router';
import { SessionContext } from './session';
import type { SessionInfo } from './types';

interface Route {
  path: string;
  label: string;
  page: () => JSX.Element;
}

const MEMBER_ROUTES: Route[] = [
  { path: '/', label: 'Overview', page: Overview },
  { path: '/keys', label: 'API keys', page: Keys },
  { path: '/credits', label: 'Credits', page: Credits },
  { path: '/usage', label: 'Usage', page: Usage },
  { path: '/crawl-jobs', label: 'Crawl jobs', page: CrawlJobs },
  { path: '/plan', label: 'Tier and limits', page: Plan },
  { path: '/parties', label: 'Party keys', page: Parties },
  { path: '/receipts', label: 'Signed receipts', page: Receipts },
  { path: '/account', label: 'Account', page: Account },
];

const OPERATOR_ROUTES: Route[] = [
  { path: '/', label: 'Overview', page: OperatorOverview },
  { path: '/operator/crawl', label: 'Crawling', page: Crawl },
  { path: '/operator/collections', label: 'Collections', page: Collections },
  { path: '/operator/crawl-jobs', label: 'Crawl jobs', page: OperatorCrawlJobs },
  { path: '/operator/index', label: 'Index', page: IndexStats },
  { path: '/operator/pricing', label: 'Prices', page: Pricing },
  { path: '/operator/tiers', label: 'Tiers', page: Tiers },
  { path: '/operator/tenants', label: 'Tenants', page: Tenants },
  { path: '/operator/revenue', label: 'Revenue', page: Revenue },
  { path: '/receipts', label: 'Signed receipts', page: Receipts },
  { path: '/account', label: 'Account', page: Account },
];

function NotFound(props: { forbidden: boolean }): JSX.Element {
  return (
    <Page title={props.forbidden ? 'Not available' : 'Page not found'}>
      <p data-testid={props.forbidden ? 'forbidden' : 'not-found'}>{props.forbidden ? 'Only operators can see this page.' : 'There is no page at this address.'}</p>
      <Link to="/">Back to the overview</Link>
    </Page>
  );
}

function Shell(props: { session: SessionInfo; routes: Route[]; path: string; children: JSX.Element }): JSX.Element {
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [props.path]);
  const user = props.session.user;
  return (
    <>
      <a href="#main" class="skip-link">
        Skip to content
      </a>
      <header class="topbar">
        <Link to="/" class="brand">
          notary<span class="brand-sub">{user?.role === 'operator' ? ' operator' : ''}</span>
        </Link>
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <span class="whoami" data-testid="whoami">
          {user?.email}
        </span>
      </header>
      <div class="layout">
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Dashboard">
          <ul>
            {props.routes.map((route) => (
              <li key={route.path}>
                <Link to={route.path} current={route.path === props.path}>
                  {route.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {props.children}
        </main>
      </div>
    </>
  );
}

export function App(): JSX.Element {
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [error, setError] = useState<unknown>(null);
  const path = usePath();
  const update = (next: SessionInfo) => {
    setCsrfToken(next.csrf_token);
    setSession(next);
  };
  const load = async () => {
    try {
      update(await api<SessionInfo>('GET', '/session'));
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    whenSignedOut(() => void load());
    void load();
  }, []);
  const signOut = async () => {
    try {
      await api('POST', '/signout');
    } finally {
      await load();
      navigate('/signin', { replace: true });
    }
  };
  if (!session) {
    return <main id="main">{error ? <ErrorNotice error={error instanceof ApiError ? error : new Error('The dashboard could not load')} /> : <Loading />}</main>;
  }
  const state = { session, update, signOut };
  const user = session.user;
  let content: JSX.Element;
  if (!user) {
    if (path !== '/signin' && path !== '/signup') {
      navigate('/signin', { replace: true });
      return <Loading />;
    }
    content = <main id="main">{path === '/signup' ? <SignUp /> : <SignIn />}</main>;
  } else {
    if (path === '/signin' || path === '/signup') {
      navigate('/', { replace: true });
      return <Loading />;
    }
    const routes = user.role === 'operator' ? OPERATOR_ROUTES : MEMBER_ROUTES;
    const route = routes.find((r) => r.path === path);
    const Found = route?.page;
    content = (
      <Shell session={session} routes={routes} path={path}>
        {Found ? <Found key={path} /> : <NotFound forbidden={path.startsWith('/operator')} />}
      </Shell>
    );
  }
  return <SessionContext.Provider value={state}>{content}</SessionContext.Provider>;
}
