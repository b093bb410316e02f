// The console: sign in with an admin token, then pages chosen by the address's #fragment (so a
// page can be bookmarked and the back button works), each a link a keyboard reaches.

import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Session } from '../../schemas/admin-api.js';
import { api, ApiError, authorize } from './api.js';
import { Page } from './components/notes.js';
import { AuditPage } from './pages/audit.js';
import { BansPage } from './pages/bans.js';
import { ChannelPage } from './pages/channel.js';
import { ChannelsPage } from './pages/channels.js';
import { KeysPage } from './pages/keys.js';
import { OverviewPage } from './pages/overview.js';
import { SignInPage } from './pages/sign-in.js';
import { forgetToken, savedToken, saveToken, tokenFromLink } from './session.js';
import 'uplot/dist/uPlot.min.css';
import './style.css';

const NAV = [
  { hash: '#/', label: 'Overview' },
  { hash: '#/channels', label: 'Channels' },
  { hash: '#/keys', label: 'Keys' },
  { hash: '#/bans', label: 'Bans' },
  { hash: '#/audit', label: 'Audit' },
];

function useHash(): string {
  const [hash, setHash] = useState(location.hash || '#/');
  useEffect(() => {
    const on = (): void => setHash(location.hash || '#/');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [checking, setChecking] = useState(true);
  const hash = useHash();
  const main = useRef<HTMLElement>(null);

  const signOut = (): void => {
    forgetToken();
    setSession(null);
  };
  const signIn = (token: string): void => {
    setChecking(true);
    authorize(token, () => {
      forgetToken();
      setSession(null);
      setError(new ApiError('admin_token_invalid', 401, 'The admin service no longer accepts this token; sign in again.'));
    });
    api<Session>('/api/session').then(
      (s) => {
        saveToken(token);
        setSession(s);
        setError(null);
      },
      (e: unknown) => {
        forgetToken();
        setSession(null);
        setError(e instanceof ApiError ? e : new ApiError('network', 0, 'The admin service cannot be reached.'));
      },
    ).finally(() => setChecking(false));
  };
  useEffect(() => {
    const token = tokenFromLink() ?? savedToken();
    if (token !== null) signIn(token);
    else setChecking(false);
  }, []);
  // A new page moves focus to its heading, so a keyboard or screen-reader user starts there.
  useEffect(() => main.current?.querySelector<HTMLElement>('h1')?.focus(), [hash, session]);

  if (session === null) return checking ? <p class="muted">Signing in…</p> : <SignInPage onToken={signIn} error={error} />;
  const channel = /^#\/channel\/(.+)$/.exec(hash);
  let page;
  const channelName = channel === null ? null : decodedOrNull(channel[1] ?? '');
  if (channel !== null && channelName === null) page = <Page title="No such channel"><p role="alert">This link names no channel: its address has a broken escape.</p></Page>;
  else if (channelName !== null) page = <ChannelPage channel={channelName} />;
  else if (hash === '#/channels') page = <ChannelsPage />;
  else if (hash === '#/keys') page = <KeysPage scopes={session.scopes} />;
  else if (hash === '#/bans') page = <BansPage />;
  else if (hash === '#/audit') page = <AuditPage />;
  else page = <OverviewPage />;
  const current = channel !== null ? '#/channels' : hash;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); main.current?.querySelector<HTMLElement>('h1')?.focus(); }}>Skip to content</a>
      <header>
        <strong>Channel relay</strong>
        <nav aria-label="Console">
          {NAV.map((n) => (
            <a key={n.hash} href={n.hash} aria-current={current === n.hash ? 'page' : undefined}>{n.label}</a>
          ))}
        </nav>
        <span class="who">signed in as {session.name} · relay {session.version}</span>
        <button type="button" onClick={signOut}>Sign out</button>
      </header>
      <main id="main" ref={main}>{page}</main>
    </>
  );
}

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(<App />, root);
}

/** A link's percent-escapes decoded, or null for a broken one (decodeURIComponent throws on %ZZ). */
function decodedOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
