// Mesh bans: who is banned, why and until when; adding one closes the account's streams on every
// node, lifting one lets it back at once.

import { useState } from 'preact/hooks';
import type { BanRecord } from '../../../schemas/records.js';
import { api, ApiError, enc } from '../api.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { ErrorNote, Loading, Page } from '../components/notes.js';
import { shown, time } from '../format.js';
import { field } from '../form.js';
import { useData } from '../use-data.js';

export function BansPage() {
  const bans = useData<BanRecord[]>('/api/bans', 10_000);
  const [error, setError] = useState<ApiError | null>(null);
  const [done, setDone] = useState('');
  const add = async (form: HTMLFormElement): Promise<void> => {
    const fd = new FormData(form);
    const expires = field(fd, 'expires');
    setError(null);
    try {
      const ban = await api<BanRecord>('/api/bans', { method: 'POST', body: { uuid: field(fd, 'uuid'), reason: field(fd, 'reason'), ...(expires !== '' ? { expires } : {}) } });
      setDone(`Banned ${ban.uuid}.`);
      form.reset();
      bans.reload();
    } catch (e) {
      if (e instanceof ApiError) setError(e);
    }
  };
  const lift = async (uuid: string): Promise<void> => {
    setError(null);
    try {
      await api(`/api/bans/${enc(uuid)}`, { method: 'DELETE' });
      setDone(`Lifted the ban on ${uuid}.`);
      bans.reload();
    } catch (e) {
      if (e instanceof ApiError) setError(e);
    }
  };
  return (
    <Page title="Bans">
      <ErrorNote error={bans.error ?? error} />
      <p class="muted" role="status">{done}</p>
      <form class="stack" aria-label="Ban a player" onSubmit={(e) => { e.preventDefault(); void add(e.currentTarget); }}>
        <label>Account UUID <input name="uuid" required size={36} placeholder="069a79f4-44e9-4726-a5be-fca90e38aaf5" /></label>
        <label>Reason <input name="reason" required maxLength={500} placeholder="spam in chat" /></label>
        <label>Expires (optional) <input name="expires" placeholder="7d or 2030-01-31" /></label>
        <button type="submit">Ban</button>
      </form>
      {bans.data === null ? (
        <Loading what="bans" />
      ) : bans.data.length === 0 ? (
        <p class="muted">Nobody is banned.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Bans">
            <thead>
              <tr><th scope="col">Account</th><th scope="col">Reason</th><th scope="col">By</th><th scope="col">Since</th><th scope="col">Until</th><th scope="col"><span class="sr-only">Actions</span></th></tr>
            </thead>
            <tbody>
              {bans.data.map((b) => (
                <tr key={b.uuid}>
                  <th scope="row" class="mono">{b.uuid}</th>
                  <td>{shown(b.reason)}</td>
                  <td>{shown(b.by)}</td>
                  <td class="when">{time(b.bannedAt)}</td>
                  <td class="when">{b.expiresAt !== undefined ? time(b.expiresAt) : 'for good'}</td>
                  <td><ConfirmButton label="Lift" confirm={`Lift the ban on ${b.uuid}`} onConfirm={() => lift(b.uuid)} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
