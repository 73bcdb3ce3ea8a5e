/** The console's shell: who is signed in, the navigation for their role, and which page the path names. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { MEMBER_PAGES, MODELS_PAGE, OPERATOR_PAGES, navHref, type NavPage } from '../../src/console/console-nav';
import { api, messageOf } from './api';
import type { MeObject } from './api-types';
import type { PageProps } from './page-props';
import { Link, navigate, useLocation } from './router';
import { ErrorNote } from './ui';
import { SignIn, SignUp } from './pages/sign-in';
import { Overview } from './pages/overview';
import { Keys } from './pages/keys';
import { Products } from './pages/products';
import { CheckoutResult } from './pages/checkout-result';
import { UsagePage } from './pages/usage';
import { Settings } from './pages/settings';
import { AdminAccounts } from './pages/admin-accounts';
import { AdminProducts } from './pages/admin-products';
import { AdminCodes } from './pages/admin-codes';
import { AdminUsage } from './pages/admin-usage';
import { AdminWebhooks } from './pages/admin-webhooks';
import { AdminUpstreams } from './pages/admin-upstreams';

type Session = { state: 'checking' } | { state: 'signed-out' } | { state: 'failed'; message: string } | { state: 'in'; me: MeObject };

function page(path: string, query: URLSearchParams, props: PageProps): ComponentChildren {
  const admin = props.me.role === 'admin';
  switch (path) {
    case '/console':
      // Stripe Checkout sends the buyer back to /console/?checkout=success (or cancelled).
      return query.has('checkout') ? <CheckoutResult {...props} /> : <Overview {...props} />;
    case '/console/keys':
      return <Keys {...props} />;
    case '/console/products':
      return <Products {...props} />;
    case '/console/usage':
      return <UsagePage {...props} />;
    case '/console/settings':
      return <Settings {...props} />;
  }
  if (path.startsWith('/console/admin/') && !admin) return <ErrorNote message="This page is for operators only." />;
  switch (path) {
    case '/console/admin/accounts':
      return <AdminAccounts {...props} />;
    case '/console/admin/products':
      return <AdminProducts {...props} />;
    case '/console/admin/codes':
      return <AdminCodes {...props} />;
    case '/console/admin/usage':
      return <AdminUsage {...props} />;
    case '/console/admin/webhooks':
      return <AdminWebhooks {...props} />;
    case '/console/admin/upstreams':
      return <AdminUpstreams {...props} />;
  }
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no console page at this address. Go to the <Link href="/console/">overview</Link>.
      </p>
    </>
  );
}

export function App() {
  const { path, query } = useLocation();
  const [session, setSession] = useState<Session>({ state: 'checking' });

  const refresh = async () => {
    try {
      const found = await api.session();
      setSession(found.signed_in ? { state: 'in', me: found.account } : { state: 'signed-out' });
    } catch (err) {
      setSession({ state: 'failed', message: messageOf(err) });
    }
  };
  useEffect(() => void refresh(), []);

  const signedIn = session.state === 'in';
  const publicPage = path === '/console/signin' || path === '/console/signup';
  useEffect(() => {
    if (session.state === 'signed-out' && !publicPage) navigate(`/console/signin`, { replace: true });
    if (signedIn && publicPage) navigate('/console/', { replace: true });
  }, [session.state, path]);

  const signOut = async () => {
    try {
      await api.logout();
    } finally {
      setSession({ state: 'signed-out' });
      navigate('/console/signin');
    }
  };

  let content: ComponentChildren;
  if (session.state === 'checking') content = <p class="loading">Loading the console…</p>;
  else if (session.state === 'failed') content = <ErrorNote message={`The console could not start: ${session.message}`} />;
  else if (path === '/console/signup') content = <SignUp onSignedIn={refresh} />;
  else if (session.state === 'signed-out') content = <SignIn onSignedIn={refresh} />;
  else content = publicPage ? null : page(path, query, { me: session.me, refresh });

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link class="brand" href="/console/">
          tokenmeter
        </Link>
        <nav aria-label="Main">
          {signedIn && <NavLinks pages={MEMBER_PAGES} path={path} />}
          {signedIn && session.me.role === 'admin' && (
            <span class="admin-nav">
              <span class="nav-group">Operator</span>
              <NavLinks pages={OPERATOR_PAGES} path={path} />
            </span>
          )}
          {/* The model page is served apart (it works without JavaScript): an ordinary link, loading it. */}
          <a href={navHref(MODELS_PAGE)}>{MODELS_PAGE.label}</a>
        </nav>
        {signedIn && (
          <div class="who">
            <span class="muted" title={session.me.email ?? undefined}>
              {session.me.email}
            </span>
            <button type="button" class="link" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}

function NavLinks({ pages, path }: { pages: readonly NavPage[]; path: string }) {
  return (
    <>
      {pages.map((p) => (
        <Link key={p.path} href={navHref(p)} aria-current={path === p.path ? 'page' : undefined}>
          {p.label}
        </Link>
      ))}
    </>
  );
}
