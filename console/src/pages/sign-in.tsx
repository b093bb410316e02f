// Sign-in: an admin token, checked against the service before it is kept for this tab.

import { useState } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { ErrorNote } from '../components/notes.js';

export function SignInPage({ onToken, error }: { onToken: (token: string) => void; error: ApiError | null }) {
  const [token, setToken] = useState('');
  return (
    <main id="main" class="signin">
      <h1>Channel relay console</h1>
      <form aria-label="Sign in" onSubmit={(e) => { e.preventDefault(); onToken(token.trim()); }}>
        <label>
          Admin token
          <input type="password" name="token" autoComplete="current-password" required autoFocus value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </label>
        <button type="submit">Sign in</button>
      </form>
      <ErrorNote error={error} />
      <p class="muted">The token is ADMIN_TOKEN (or one of ADMIN_TOKENS) of the admin service; npm start prints a sign-in link. It is kept in this tab only.</p>
    </main>
  );
}
