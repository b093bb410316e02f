// API keys: which build uses which key (its label), creating one (its secret shown once, here
// only) and revoking one (every stream opened with it closes).

import { useState } from 'preact/hooks';
import type { KeyView } from '../../../schemas/admin-api.js';
import { api, ApiError, enc } from '../api.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { ErrorNote, Loading, Page } from '../components/notes.js';
import { shown, time } from '../format.js';
import { field } from '../form.js';
import { useData } from '../use-data.js';

interface Created {
  clientId: string;
  clientSecret: string;
  label?: string;
}

/** What a mod build needs to connect, send and receive as its player. */
const DEFAULT_SCOPES = ['irc.connection.establish', 'irc.messages.send', 'irc.messages.receive'];

export function KeysPage({ scopes }: { scopes: string[] }) {
  const keys = useData<KeyView[]>('/api/keys');
  const [created, setCreated] = useState<Created | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const create = async (form: HTMLFormElement): Promise<void> => {
    const fd = new FormData(form);
    const chosen = fd.getAll('scope').filter((s): s is string => typeof s === 'string');
    const label = field(fd, 'label');
    const expires = field(fd, 'expires');
    setError(null);
    try {
      setCreated(await api<Created>('/api/keys', { method: 'POST', body: { scopes: chosen, ...(label !== '' ? { label } : {}), ...(expires !== '' ? { expires } : {}) } }));
      form.reset();
      keys.reload();
    } catch (e) {
      if (e instanceof ApiError) setError(e);
    }
  };
  const revoke = async (clientId: string): Promise<void> => {
    setError(null);
    try {
      await api(`/api/keys/${enc(clientId)}/revoke`, { method: 'POST' });
      keys.reload();
    } catch (e) {
      if (e instanceof ApiError) setError(e);
    }
  };
  return (
    <Page title="Keys">
      <ErrorNote error={keys.error ?? error} />
      {created !== null && (
        <div class="secret" role="status">
          <h2>Key created{created.label !== undefined ? `: ${created.label}` : ''}</h2>
          <p>Copy the secret now: it is shown this once and never stored.</p>
          <dl>
            <dt>Client id</dt><dd><code data-testid="new-client-id">{created.clientId}</code></dd>
            <dt>Client secret</dt><dd><code data-testid="new-client-secret">{created.clientSecret}</code></dd>
          </dl>
          <button type="button" onClick={() => setCreated(null)}>I have copied it</button>
        </div>
      )}
      <details open={keys.data?.length === 0} key={created?.clientId ?? 'form'}>
        <summary>Create a key</summary>
        <form aria-label="Create a key" onSubmit={(e) => { e.preventDefault(); void create(e.currentTarget); }}>
          <label>Label (which build or bridge uses it) <input name="label" maxLength={200} placeholder="examplemod 2.1 release" /></label>
          <label>Expires (optional) <input name="expires" placeholder="90d or 2030-01-31" /></label>
          <fieldset>
            <legend>Scopes</legend>
            {scopes.map((s) => (
              <label class="check" key={s}>
                <input type="checkbox" name="scope" value={s} defaultChecked={DEFAULT_SCOPES.includes(s)} /> {s}
              </label>
            ))}
          </fieldset>
          <button type="submit">Create key</button>
        </form>
      </details>
      {keys.data === null ? (
        <Loading what="keys" />
      ) : keys.data.length === 0 ? (
        <p class="muted">No keys yet.</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr><th scope="col">Client id</th><th scope="col">Label</th><th scope="col">Status</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="sr-only">Actions</span></th></tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.clientId}>
                  <th scope="row" class="mono">{k.clientId}</th>
                  <td>{k.label !== undefined ? shown(k.label) : '–'}</td>
                  <td class={k.status === 'active' ? 'good' : 'bad'}>{k.status}</td>
                  <td class="scopes">
                    {k.scopes.length <= 3 ? (
                      k.scopes.join(' ')
                    ) : (
                      <details>
                        <summary>{k.scopes.length} scopes</summary>
                        {k.scopes.join(' ')}
                      </details>
                    )}
                  </td>
                  <td class="when">{time(k.createdAt)}</td>
                  <td class="when">{k.expiresAt !== undefined ? time(k.expiresAt) : 'never'}</td>
                  <td>{k.status !== 'revoked' && <ConfirmButton label="Revoke" confirm={`Revoke ${k.label ?? k.clientId}`} onConfirm={() => revoke(k.clientId)} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
