// What the region checker reads once the mesh has healed, in each region with that region's gateway
// credentials (the one role that reads a region's log and the copies kept there: it may ask their
// leader for a message): every region's own log, each entry with its region and its sequence there,
// and every region's copy of every other region's log, which the checker compares with the origin.

import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, type JetStreamManager, type StoredMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { channelFromToken } from '../../services/core/channel.js';
import { CHANNEL_SUBJECT_PREFIX, inboxPrefix, regionCopyStream, regionLogStream, regionSubjectPrefix } from '../../services/core/subjects.js';
import { messageOf } from './final-state.js';
import type { LogEntry } from './records.js';

/** Gets in flight at once per stream. */
const IN_FLIGHT = 32;
/** Tries of one get before the read fails (30 s at 500 ms). */
const GET_ATTEMPTS = 60;

/** A stream as read: its entries and the sequences in [first, last] it has no message for. */
export interface ReadStream {
  entries: LogEntry[];
  missing: number[];
}

export interface RegionLogs {
  /** Every region's own log. */
  log: LogEntry[];
  /** Per region, the sequences its log has no message for (none expected: nothing is deleted). */
  missing: Map<string, number[]>;
  /** Region `at`'s copy of region `origin`'s log (sequences are the origin's). */
  copies: Array<{ at: string; origin: string } & ReadStream>;
}

type Place = { name: string; servers: string; user: string; pass: string };

async function inRegion<T>(r: Place, use: (jsm: JetStreamManager) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: r.servers.split(','), user: r.user, pass: r.pass, inboxPrefix: inboxPrefix('gateway'), name: `chaos-checker-${r.name}` });
  try {
    return await use(await jetstreamManager(nc, { timeout: 20_000, checkAPI: false }));
  } finally {
    await nc.close();
  }
}

/**
 * Until every copy's last sequence is its origin's, or `ms` passed: a mirror catches up a few
 * seconds after its link returns, and a copy read while it does would be taken for a divergence.
 */
export async function untilCopiesCaughtUp(regions: readonly Place[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const lasts = await Promise.all(
      regions.map((r) =>
        inRegion(r, async (jsm) => {
          const own = (await jsm.streams.info(regionLogStream(r.name))).state.last_seq;
          const copies = await Promise.all(regions.filter((o) => o.name !== r.name).map(async (o) => ({ origin: o.name, last: (await jsm.streams.info(regionCopyStream(o.name, r.name))).state.last_seq })));
          return { region: r.name, own, copies };
        }),
      ),
    );
    const own = new Map(lasts.map((l) => [l.region, l.own]));
    if (lasts.every((l) => l.copies.every((c) => c.last === own.get(c.origin)))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((res) => setTimeout(res, 500));
  }
}

export async function readRegionLogs(regions: readonly Place[]): Promise<RegionLogs> {
  const out: RegionLogs = { log: [], missing: new Map(), copies: [] };
  for (const r of regions) {
    await inRegion(r, async (jsm) => {
      const own = await readStream(jsm, regionLogStream(r.name), r.name);
      out.log.push(...own.entries);
      out.missing.set(r.name, own.missing);
      for (const origin of regions) {
        if (origin.name !== r.name) out.copies.push({ at: r.name, origin: origin.name, ...(await readStream(jsm, regionCopyStream(origin.name, r.name), origin.name)) });
      }
    });
  }
  return out;
}

/**
 * The message at `seq`, or null when the stream has none there. A get that fails otherwise (a
 * timeout, JetStream between meta leaders just after a region's restart) is asked again: taken for a
 * hole, it once made a run report acknowledged POSTs lost, frames of no entry and copies that diverge,
 * every one of them in the store (seed 3).
 */
async function getOrNothing(jsm: JetStreamManager, stream: string, seq: number): Promise<StoredMsg | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await jsm.streams.getMessage(stream, { seq });
    } catch (e) {
      if (isNoMessage(e)) return null;
      if (attempt >= GET_ATTEMPTS) throw new Error(`could not read ${stream} at ${seq} in ${GET_ATTEMPTS} attempts: ${String(e)}`, { cause: e });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

const isNoMessage = (e: unknown): boolean => e instanceof JetStreamApiError && e.code === JetStreamApiCodes.NoMessageFound;

async function readStream(jsm: JetStreamManager, stream: string, origin: string): Promise<ReadStream> {
  const { first_seq: first, last_seq: last } = (await jsm.streams.info(stream)).state;
  const prefix = regionSubjectPrefix(origin) + CHANNEL_SUBJECT_PREFIX;
  const entries: LogEntry[] = [];
  const missing: number[] = [];
  let next = first;
  const worker = async (): Promise<void> => {
    while (next <= last) {
      const seq = next++;
      const m = await getOrNothing(jsm, stream, seq);
      if (m === null || m.seq !== seq) missing.push(seq);
      else entries.push({ seq, region: origin, channel: channelFromToken(m.subject.slice(prefix.length)), message: messageOf(m.string()) });
    }
  };
  if (first > 0) await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { entries: entries.sort((a, b) => a.seq - b.seq), missing: missing.sort((a, b) => a - b) };
}
