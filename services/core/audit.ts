// The audit trail: every operator action (a key created or revoked, a ban added or lifted) is an
// event in its own JetStream stream, RELAY_AUDIT, with who did it and when. Kept apart from the
// event log so the log's per-channel limits and retention never touch it. `relay audit` reads it.

import { userInfo, hostname } from 'node:os';
import { DeliverPolicy, type JetStreamClient, type OrderedConsumerOptions } from '@nats-io/jetstream';
import type { AuditRecord } from '../../schemas/records.js';
import { escapeControlChars } from './display.js';
import { startingAt } from './log-query.js';
import { parseAuditRecord } from './records.js';
import { AUDIT_STREAM_NAME } from './subjects.js';

/**
 * Who is acting: RELAY_ACTOR when set, else the operating-system user and host. Other operators read
 * it in the audit trail and the bans list: control characters are kept as visible escapes.
 */
export function currentActor(env: NodeJS.ProcessEnv = process.env): string {
  const named = env['RELAY_ACTOR']?.trim();
  if (named !== undefined && named !== '') return escapeControlChars(named);
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the host still says where it came from.
  }
  return escapeControlChars(`${user}@${hostname()}`);
}

export class AuditLog {
  private readonly js: JetStreamClient;

  constructor(js: JetStreamClient) {
    this.js = js;
  }

  /** Stores one record and waits for the stream's acknowledgement. */
  async record(entry: Omit<AuditRecord, 'at'>, at = new Date()): Promise<AuditRecord> {
    const record: AuditRecord = { at: at.toISOString(), ...entry };
    await this.js.publish(`audit.${entry.action}`, JSON.stringify(record));
    return record;
  }

  /** Records from `since` (ISO time; all kept when null), oldest first, at most `limit`. */
  list(since: string | null, limit: number): Promise<AuditRecord[]> {
    return this.read(since === null ? { deliver_policy: DeliverPolicy.All } : startingAt(since), limit);
  }

  /**
   * The newest `limit` records from `since` (ISO time; all kept when null), oldest first, as `tail -n`
   * shows a file: `relay audit --limit 5` answers what was done lately, not what was done first.
   */
  async newest(since: string | null, limit: number): Promise<AuditRecord[]> {
    if (since === null) return this.latest(limit);
    // The trail holds operators' actions, not traffic: reading all of it from `since` stays small.
    return (await this.read(startingAt(since), Number.POSITIVE_INFINITY)).slice(-limit);
  }

  /** The newest `limit` records, oldest first (the console's view: what was done lately). */
  async latest(limit: number): Promise<AuditRecord[]> {
    const { state } = await (await this.js.jetstreamManager()).streams.info(AUDIT_STREAM_NAME);
    if (state.messages === 0) return [];
    const from = Math.max(state.first_seq, state.last_seq - limit + 1);
    return this.read({ deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from }, limit);
  }

  private async read(start: Partial<OrderedConsumerOptions>, limit: number): Promise<AuditRecord[]> {
    const consumer = await this.js.consumers.get(AUDIT_STREAM_NAME, start);
    const out: AuditRecord[] = [];
    try {
      if ((await consumer.info(true)).num_pending === 0) return out;
      const messages = await consumer.consume({ max_messages: 256 });
      try {
        for await (const m of messages) {
          const record = parseJson(m.string());
          if (record !== null) out.push(record);
          if (out.length >= limit || m.info.pending === 0) break;
        }
      } finally {
        await messages.close();
      }
      return out;
    } finally {
      // An ordered consumer otherwise stays on the server five minutes after its reader (the
      // console reads the trail every few seconds).
      await consumer.delete().catch(() => undefined);
    }
  }
}

/** A stored record, or null for anything else on an audit subject (never a crash). */
function parseJson(text: string): AuditRecord | null {
  try {
    return parseAuditRecord(JSON.parse(text));
  } catch {
    return null;
  }
}
