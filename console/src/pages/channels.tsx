// Every channel with streams or payloads lately: searchable, sortable by any column.

import { useState } from 'preact/hooks';
import type { ChannelView } from '../../../schemas/admin-api.js';
import { ErrorNote, Loading, Page } from '../components/notes.js';
import { ago, rate } from '../format.js';
import { enc } from '../api.js';
import { useData } from '../use-data.js';

type Column = 'channel' | 'streams' | 'framesInPerSecond' | 'lastActivity';
const COLUMNS: { key: Column; label: string }[] = [
  { key: 'channel', label: 'Channel' },
  { key: 'streams', label: 'Streams' },
  { key: 'framesInPerSecond', label: 'Payloads/s (1 min)' },
  { key: 'lastActivity', label: 'Last payload' },
];

export function ChannelsPage() {
  const { data, error } = useData<ChannelView[]>('/api/channels', 5000);
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<{ by: Column; desc: boolean }>({ by: 'streams', desc: true });
  const rows = (data ?? [])
    .filter((c) => c.channel.includes(search.trim().toLowerCase()))
    .sort((a, b) => {
      const x = a[sort.by] ?? '';
      const y = b[sort.by] ?? '';
      const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return sort.desc ? -order : order;
    });
  return (
    <Page title="Channels">
      <ErrorNote error={error} />
      <label class="search">
        Search <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} placeholder="play.example.net" />
      </label>
      {data === null ? (
        <Loading what="channels" />
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th scope="col" key={c.key} aria-sort={sort.by === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
                    <button type="button" class="sort" onClick={() => setSort({ by: c.key, desc: sort.by === c.key ? !sort.desc : c.key !== 'channel' })}>
                      {c.label} {sort.by === c.key ? (sort.desc ? '▼' : '▲') : ''}
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.channel}>
                  <th scope="row"><a href={`#/channel/${enc(c.channel)}`}>{c.channel}</a></th>
                  <td>{c.streams}</td>
                  <td>{rate(c.framesInPerSecond)}</td>
                  <td class="when">{ago(c.lastActivity)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data !== null && rows.length === 0 && <p class="muted">{search === '' ? 'No channel has streams or payloads yet.' : 'No channel matches.'}</p>}
      <form class="inline" onSubmit={(e) => { e.preventDefault(); const v = new FormData(e.currentTarget).get('open'); if (typeof v === 'string' && v.trim() !== '') location.hash = `#/channel/${enc(v.trim())}`; }}>
        <label>Open any channel <input name="open" placeholder="play.example.net" /></label>
        <button type="submit">Open</button>
      </form>
    </Page>
  );
}
