// Each reader's client against its channel's logs in a mesh of regions (docs/REGIONS.md). A frame's
// id is its stream's position in every region's log (`a:12.b:7`), so the one-log rule of
// check-readers.ts holds per region: the client's frames of region R, joined across its reconnects,
// are R's entries of the channel from its start on, no gap, no duplicate, no reorder; its start is its
// Last-Event-ID (a resume, perhaps begun in another region), else the position its first frame names.
// And the id moves only with the frame sent: it names the frame's own place in its region's log, and
// every other region where the stream already was.

import { parseEventId } from '../../schemas/event-id.js';
import type { ReaderCounts } from './check-readers.js';
import type { Anomaly, ClientRecord, LogEntry } from './records.js';

/** How many missing entries a gap's sentence quotes. */
const QUOTED = 5;

/** The positions an id names (a region not named is at 0), or null when it is not a region id. */
export function regionPosition(id: string): Map<string, number> | null {
  const p = parseEventId(id);
  return p?.kind === 'regions' ? new Map(p.seqs) : null;
}

/** One channel's entries in each region's log, in log order. */
function byRegion(log: readonly LogEntry[], channel: string): Map<string, LogEntry[]> {
  const out = new Map<string, LogEntry[]>();
  for (const e of log) {
    if (e.channel !== channel || e.region === undefined) continue;
    const list = out.get(e.region);
    if (list === undefined) out.set(e.region, [e]);
    else list.push(e);
  }
  for (const list of out.values()) list.sort((a, b) => a.seq - b.seq);
  return out;
}

/** Index of the first entry after `seq` (entries.length when none). */
function after(entries: readonly LogEntry[], seq: number): number {
  const i = entries.findIndex((e) => e.seq > seq);
  return i < 0 ? entries.length : i;
}

const spell = (p: ReadonlyMap<string, number>): string => [...p].filter(([, s]) => s > 0).map(([r, s]) => `${r}:${s}`).join('.') || '(nothing)';

export function checkRegionReaders(clients: ReadonlyArray<ClientRecord<string>>, log: readonly LogEntry[]): { counts: ReaderCounts; anomalies: Anomaly[] } {
  const counts: ReaderCounts = { clients: clients.length, frames: 0, caughtUp: 0 };
  const anomalies: Anomaly[] = [];
  type Channel = { regions: Map<string, LogEntry[]>; byMessage: Map<string, LogEntry[]>; index: Map<LogEntry, number> };
  const channels = new Map<string, Channel>();
  const channelOf = (channel: string): Channel => {
    let c = channels.get(channel);
    if (c === undefined) {
      const regions = byRegion(log, channel);
      const byMessage = new Map<string, LogEntry[]>();
      // Each entry's place in its region's list: a long run checks millions of frames.
      const index = new Map<LogEntry, number>();
      // A message stored twice is the write checker's finding (or, in two regions, a POST that failed
      // over: two entries, each sent once): a frame is the place its id names, else the first.
      for (const list of regions.values()) {
        for (const [i, e] of list.entries()) {
          index.set(e, i);
          const places = byMessage.get(e.message);
          if (places === undefined) byMessage.set(e.message, [e]);
          else places.push(e);
        }
      }
      c = { regions, byMessage, index };
      channels.set(channel, c);
    }
    return c;
  };

  for (const c of clients) {
    const { regions, byMessage, index } = channelOf(c.channel);
    const add = (cls: Anomaly['class'], t: number, text: string): void => void anomalies.push({ class: cls, t, subjects: [c.id], text: `${c.id} ${text}` });
    // Where the stream is (null: a fresh client before its first frame) and the next entry due per region.
    let position: Map<string, number> | null = null;
    const start = c.startId === null ? null : regionPosition(c.startId);
    if (c.startId !== null) {
      position = start === null ? null : new Map(start);
      if (start === null) add('wrong-id', 0, `started from ${c.startId}, which is no region id`);
    }
    const next = new Map<string, number>();
    const nextOf = (r: string): number => next.get(r) ?? after(regions.get(r) ?? [], position?.get(r) ?? 0);
    const seen = new Set<LogEntry>();
    for (const f of c.frames) {
      counts.frames++;
      const named = regionPosition(f.id);
      const places = byMessage.get(f.message);
      // Of two copies both named, the one whose region the id moves (a frame moves only its own region).
      const isNamed = (e: LogEntry): boolean => named?.get(e.region!) === e.seq;
      const entry = places?.find((e) => isNamed(e) && position?.get(e.region!) !== e.seq) ?? places?.find(isNamed) ?? places?.[0];
      if (named === null || entry === undefined) {
        add('wrong-frame', f.t, `received "${f.message}" with id ${f.id}: ${named === null ? 'no region id' : `no entry of ${c.channel} in any region's log`}`);
        continue;
      }
      const r = entry.region!;
      if (named.get(r) !== entry.seq) add('wrong-id', f.t, `received "${f.message}" (${r}:${entry.seq} in the log) with id ${f.id}`);
      if (position === null) {
        // A fresh stream's first frame: it starts there in its region, and where the id says in the others.
        position = new Map(named);
        position.set(r, entry.seq - 1);
      } else {
        const was: ReadonlyMap<string, number> = position;
        const moved = [...new Set([...was.keys(), ...named.keys()])].filter((q) => q !== r && (named.get(q) ?? 0) !== (was.get(q) ?? 0));
        if (moved.length > 0) add('wrong-id', f.t, `received ${r}:${entry.seq} with id ${f.id}, which moves ${moved.join(', ')} from ${spell(was)} without a frame`);
      }
      const entries = regions.get(r) ?? [];
      const at = index.get(entry)!;
      const due = nextOf(r);
      if (at < due) {
        // Sent again: twice to this client, or once already to the stream its Last-Event-ID came from.
        const resent = entry.seq <= (start?.get(r) ?? 0);
        const kind = seen.has(entry) || resent ? 'duplicate-frame' : 'reorder';
        const why = seen.has(entry) ? 'again' : resent ? `though its Last-Event-ID ${c.startId ?? ''} names it` : 'after a newer frame of its region';
        add(kind, f.t, `received ${r}:${entry.seq} ${why} (expected ${entries[due] !== undefined ? `${r}:${entries[due].seq}` : `nothing more from ${r}`})`);
      } else {
        if (at > due) {
          const missing = entries.slice(due, at).map((e) => `${r}:${e.seq}`);
          add('gap', f.t, `received ${r}:${entry.seq} without the ${missing.length} before it on ${c.channel}: ${missing.slice(0, QUOTED).join(', ')}${missing.length > QUOTED ? ', ...' : ''}`);
        }
        next.set(r, at + 1);
        position.set(r, entry.seq);
      }
      seen.add(entry);
    }
    if (c.closed !== null) {
      // Evicted by another stream of its account is the one end the workload asks for.
      if (c.closed.reason !== 'evicted') add('closed-for-good', c.closed.t, `had its stream closed for good: ${c.closed.reason}`);
      continue;
    }
    // A fresh client sent nothing has no position to be behind of (as with one log).
    const behind = position === null ? [] : [...regions].filter(([r, entries]) => nextOf(r) < entries.length).map(([r, entries]) => `${r} ${entries.length - nextOf(r)} behind (log to ${r}:${entries.at(-1)!.seq})`);
    if (behind.length === 0) counts.caughtUp++;
    else add('not-caught-up', c.frames.at(-1)?.t ?? 0, `stopped at ${c.frames.at(-1)?.id ?? c.startId ?? 'nothing'}: ${behind.join(', ')}`);
  }
  return { counts, anomalies };
}

/** Whether a client's position has reached every region's newest entry of its channel (for the quiet period's wait). */
export function reached(id: string | null, newest: ReadonlyMap<string, number>): boolean {
  const p = id === null ? new Map<string, number>() : (regionPosition(id) ?? new Map<string, number>());
  return [...newest].every(([r, seq]) => (p.get(r) ?? 0) >= seq);
}
