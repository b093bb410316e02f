// The admin token of this tab. Kept in sessionStorage (gone when the tab closes), sent only as an
// Authorization header; a sign-in link's #token=... is read once and removed from the address bar.

const KEY = 'relay-admin-token';

export function tokenFromLink(): string | null {
  const match = /^#token=([^&]+)/.exec(location.hash);
  if (match === null) return null;
  history.replaceState(null, '', location.pathname + location.search + '#/');
  return decodeURIComponent(match[1] ?? '');
}

export function savedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
