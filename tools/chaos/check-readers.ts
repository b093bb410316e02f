// Each reader's client against its channel's log: its frames, joined across its reconnects, are
// the channel's log from its first frame on (from the entry after its Last-Event-ID when it started
// with one), with no gap, no duplicate and no reorder, each frame carrying the message the log has
// at its id; and a client still running at the end has reached the end of the log. Readers hold
// scopes that hear everything on their channel, so the expected frames are the channel's whole log.

import type { Anomaly, ClientRecord, LogEntry } from './records.js';

/** How many missing ids a gap's sentence quotes. */
const QUOTED = 5;

export interface ReaderCounts {
  clients: number;
  /** Frames checked against the log. */
  frames: number;
  /** Clients still running at the end that reached the end of their channel's log. */
  caughtUp: number;
}

export function checkReaders(clients: readonly ClientRecord[], log: readonly LogEntry[]): { counts: ReaderCounts; anomalies: Anomaly[] } {
  const channels = new Map<string, LogEntry[]>();
  for (const e of log) {
    const list = channels.get(e.channel);
    if (list === undefined) channels.set(e.channel, [e]);
    else list.push(e);
  }
  const bySeq = new Map(log.map((e) => [e.seq, e]));
  const counts: ReaderCounts = { clients: clients.length, frames: 0, caughtUp: 0 };
  const anomalies: Anomaly[] = [];

  for (const c of clients) {
    const entries = channels.get(c.channel) ?? [];
    const position = new Map(entries.map((e, i) => [e.seq, i]));
    // Where the client's frames must start: after its Last-Event-ID, else at its first frame.
    let next = c.startId !== null ? entries.findIndex((e) => e.seq > c.startId!) : c.frames.length > 0 ? (position.get(c.frames[0]!.id) ?? 0) : entries.length;
    if (next < 0) next = entries.length;
    const seen = new Set<number>();
    for (const f of c.frames) {
      counts.frames++;
      const entry = bySeq.get(f.id);
      const at = position.get(f.id);
      if (entry === undefined || at === undefined) {
        const what = entry === undefined ? 'no entry of the log' : `an entry of ${entry.channel}`;
        anomalies.push({ class: 'wrong-frame', t: f.t, subjects: [c.id], text: `${c.id} received id ${f.id} as "${f.message}", which is ${what}` });
        continue;
      }
      // A frame of the channel whose content is not the log's: wrong, yet in its place (no gap).
      if (entry.message !== f.message) {
        anomalies.push({ class: 'wrong-frame', t: f.t, subjects: [c.id], text: `${c.id} received id ${f.id} as "${f.message}"; the log has "${entry.message}"` });
      }
      if (at < next) {
        const kind = seen.has(f.id) ? 'duplicate-frame' : 'reorder';
        anomalies.push({ class: kind, t: f.t, subjects: [c.id], text: `${c.id} received id ${f.id} ${kind === 'duplicate-frame' ? 'again' : 'after a newer frame'} (expected ${entries[next]?.seq ?? 'nothing more'})` });
      } else {
        if (at > next) {
          const missing = entries.slice(next, at).map((e) => e.seq);
          anomalies.push({
            class: 'gap',
            t: f.t,
            subjects: [c.id],
            text: `${c.id} received id ${f.id} without the ${missing.length} before it on ${c.channel}: ${missing.slice(0, QUOTED).join(', ')}${missing.length > QUOTED ? ', ...' : ''}`,
          });
        }
        next = at + 1;
      }
      seen.add(f.id);
    }
    if (c.closed !== null) {
      // Evicted by another stream of its account is the one end the workload asks for.
      if (c.closed.reason !== 'evicted') anomalies.push({ class: 'closed-for-good', t: c.closed.t, subjects: [c.id], text: `${c.id}'s stream was closed for good: ${c.closed.reason}` });
      continue;
    }
    if (next >= entries.length) counts.caughtUp++;
    else {
      const last = c.frames.at(-1);
      anomalies.push({
        class: 'not-caught-up',
        t: last?.t ?? 0,
        subjects: [c.id],
        text: `${c.id} stopped at ${last?.id ?? c.startId ?? 'nothing'}; ${c.channel}'s log goes on to ${entries.at(-1)?.seq} (${entries.length - next} frames behind)`,
      });
    }
  }
  return { counts, anomalies };
}
