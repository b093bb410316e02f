// One channel: who is connected (its streams), what is said now (a live tail) and what was said
// (a replay from a time or sequence), both filtered by payload type and sender.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { StreamView } from '../../../schemas/admin-api.js';
import { entryName, type LogEntry } from '../../../schemas/log-entry.js';
import { api, ApiError, enc, tail } from '../api.js';
import { ErrorNote, Loading, Page } from '../components/notes.js';
import { ago, shown, time } from '../format.js';
import { field } from '../form.js';
import { useData } from '../use-data.js';

type Entry = LogEntry;

/** The tail keeps the newest entries only: a busy channel must not fill the tab's memory. */
const TAIL_KEEP = 500;

export function ChannelPage({ channel }: { channel: string }) {
  const streams = useData<StreamView[]>(`/api/channels/${enc(channel)}/streams`, 5000);
  return (
    <Page title={channel}>
      <p><a href="#/channels">← All channels</a></p>
      <h2>Streams</h2>
      <ErrorNote error={streams.error} />
      {streams.data === null ? <Loading what="streams" /> : <Streams rows={streams.data} />}
      <LiveTail channel={channel} />
      <ReplayForm channel={channel} />
    </Page>
  );
}

function Streams({ rows }: { rows: StreamView[] }) {
  if (rows.length === 0) return <p class="muted">No stream is open on this channel.</p>;
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr><th scope="col">Account</th><th scope="col">Agent</th><th scope="col">Key</th><th scope="col">Node</th><th scope="col">Open since</th></tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.conn}>
              <th scope="row" class="mono">{s.uuid ?? (s.channel === null ? 'bridge (every channel)' : 'bridge')}</th>
              <td>{s.agent === undefined || s.agent === null ? '–' : shown(s.agent)}</td>
              <td>{s.keyLabel !== null ? shown(s.keyLabel) : <span class="mono">{shown(s.clientId)}</span>}</td>
              <td>{shown(s.node)}</td>
              <td class="when" title={s.openedAt}>{ago(s.openedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Filters({ prefix }: { prefix: string }) {
  return (
    <>
      <label>Types <input name="type" id={`${prefix}-type`} placeholder="chat,death" /></label>
      <label>Sender <input name="sender" id={`${prefix}-sender`} placeholder="account UUID" size={36} /></label>
    </>
  );
}

function query(form: HTMLFormElement, names: string[]): string {
  const fd = new FormData(form);
  const params = new URLSearchParams();
  for (const n of names) if (field(fd, n) !== '') params.set(n, field(fd, n));
  const s = params.toString();
  return s === '' ? '' : `?${s}`;
}

function LiveTail({ channel }: { channel: string }) {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  /** Starting: asked for, not yet listening (a payload posted now may not show). */
  const [state, setState] = useState<'off' | 'starting' | 'following'>('off');
  const abort = useRef<AbortController | null>(null);
  useEffect(() => () => abort.current?.abort(), []);
  const start = (form: HTMLFormElement): void => {
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setEntries([]);
    setError(null);
    setState('starting');
    tail<Entry>(
      `/api/channels/${enc(channel)}/tail${query(form, ['type', 'sender'])}`,
      controller.signal,
      (e) => setEntries((list) => [e, ...list].slice(0, TAIL_KEEP)),
      () => {
        if (abort.current === controller) setState('following');
      },
    )
      .catch((e: unknown) => {
        if (e instanceof ApiError) setError(e);
      })
      .finally(() => {
        if (abort.current === controller) setState('off');
      });
  };
  const stop = (): void => {
    abort.current?.abort();
    abort.current = null;
    setState('off');
  };
  return (
    <>
      <h2>Live tail</h2>
      <form class="inline" aria-label="Live tail" onSubmit={(e) => { e.preventDefault(); start(e.currentTarget); }}>
        <Filters prefix="tail" />
        <button type="submit">{state === 'off' ? 'Start tail' : 'Restart tail'}</button>
        {state !== 'off' && <button type="button" onClick={stop}>Stop</button>}
      </form>
      <ErrorNote error={error} />
      <p class="muted" aria-live="polite">{state === 'following' ? `Following: ${entries.length} new payload${entries.length === 1 ? '' : 's'} (newest first).` : state === 'starting' ? 'Starting the tail…' : 'Not following.'}</p>
      <Entries entries={entries} label="Live tail" />
    </>
  );
}

function ReplayForm({ channel }: { channel: string }) {
  const [result, setResult] = useState<{ entries: Entry[]; more: boolean; nextFrom: string | null } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (form: HTMLFormElement): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      setResult(await api(`/api/channels/${enc(channel)}/replay${query(form, ['since', 'fromSeq', 'type', 'sender', 'limit'])}`));
    } catch (e) {
      if (e instanceof ApiError) setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h2>Replay</h2>
      <form class="inline" aria-label="Replay" onSubmit={(e) => { e.preventDefault(); void run(e.currentTarget); }}>
        <label>From <input name="since" defaultValue="10m" placeholder="10m, 2h, 2030-01-31T12:00:00Z" /></label>
        <label>or sequence <input name="fromSeq" size={12} placeholder="1042, or eu:1042.us:77" /></label>
        <Filters prefix="replay" />
        <label>At most <input name="limit" defaultValue="100" inputMode="numeric" size={5} /></label>
        <button type="submit" disabled={busy}>Replay</button>
      </form>
      <ErrorNote error={error} />
      {result !== null && (
        <>
          <p class="muted" aria-live="polite">
            {result.entries.length} payload{result.entries.length === 1 ? '' : 's'} stored{result.more ? `; more from sequence ${result.nextFrom ?? ''}` : ''}.
          </p>
          <Entries entries={result.entries} label="Replay" />
        </>
      )}
    </>
  );
}

function Entries({ entries, label }: { entries: Entry[]; label: string }) {
  if (entries.length === 0) return null;
  return (
    <div class="scroll">
      <table class="entries" aria-label={label}>
        <thead>
          <tr><th scope="col">Seq</th><th scope="col">Stored</th><th scope="col">Sender</th><th scope="col">Agent</th><th scope="col">Type</th><th scope="col">Payload</th></tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={entryName(e.region, e.seq)}>
              <td>{entryName(e.region, e.seq)}</td>
              <td class="when">{time(e.time)}</td>
              <td class="mono">{e.meta.uuid}</td>
              <td>{e.meta.agent !== null ? shown(e.meta.agent) : '–'}</td>
              <td>{e.data.type}</td>
              <td class="payload"><code>{shown(JSON.stringify(e.data))}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
