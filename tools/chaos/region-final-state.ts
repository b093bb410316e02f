// What the region checker reads once the mesh has healed: every region's own log, read in its region
// with that region's gateway credentials (the one role that may read it: it may ask the log's leader
// for a message), each entry with its region and its sequence there.

import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { channelFromToken } from '../../services/core/channel.js';
import { CHANNEL_SUBJECT_PREFIX, inboxPrefix, regionLogStream, regionSubjectPrefix } from '../../services/core/subjects.js';
import { messageOf } from './final-state.js';
import type { LogEntry } from './records.js';

/** Gets in flight at once per region. */
const IN_FLIGHT = 32;

export interface RegionLogs {
  log: LogEntry[];
  /** Per region, the sequences in [first, last] its log has no message for (none expected: nothing is deleted). */
  missing: Map<string, number[]>;
}

export async function readRegionLogs(regions: ReadonlyArray<{ name: string; servers: string; user: string; pass: string }>): Promise<RegionLogs> {
  const log: LogEntry[] = [];
  const missing = new Map<string, number[]>();
  for (const r of regions) {
    const read = await readRegionLog(r);
    log.push(...read.entries);
    missing.set(r.name, read.missing);
  }
  return { log, missing };
}

async function readRegionLog(r: { name: string; servers: string; user: string; pass: string }): Promise<{ entries: LogEntry[]; missing: number[] }> {
  const nc = await connect({ servers: r.servers.split(','), user: r.user, pass: r.pass, inboxPrefix: inboxPrefix('gateway'), name: `chaos-checker-${r.name}` });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 20_000, checkAPI: false });
    const stream = regionLogStream(r.name);
    const { first_seq: first, last_seq: last } = (await jsm.streams.info(stream)).state;
    const prefix = regionSubjectPrefix(r.name) + CHANNEL_SUBJECT_PREFIX;
    const entries: LogEntry[] = [];
    const missing: number[] = [];
    let next = first;
    const worker = async (): Promise<void> => {
      while (next <= last) {
        const seq = next++;
        const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
        if (m === null || m.seq !== seq) missing.push(seq);
        else entries.push({ seq, region: r.name, channel: channelFromToken(m.subject.slice(prefix.length)), message: messageOf(m.string()) });
      }
    };
    if (first > 0) await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    return { entries: entries.sort((a, b) => a.seq - b.seq), missing: missing.sort((a, b) => a - b) };
  } finally {
    await nc.close();
  }
}
