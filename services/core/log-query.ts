// Which part of the event log an operator asked for: where to start (a time, a sequence, the oldest
// kept or new payloads only) and which entries to keep (payload types, a sender). One reading of
// those options for `relay replay`/`relay tail` and the admin API's replay and live tail.

import { DeliverPolicy, type OrderedConsumerOptions } from '@nats-io/jetstream';
import { isPayloadType } from '../../schemas/payload-types.js';
import { parseEventId } from '../../schemas/event-id.js';
import { normaliseUuid } from '../../schemas/uuid.js';
import type { LogEntry } from './log-entry.js';
import { fromSequence } from './log-reader.js';
import { parseSince, parseWholeNumber } from './units.js';

export interface LogQueryInput {
  since?: string | undefined;
  fromSeq?: string | undefined;
  /** Comma-separated payload types. */
  type?: string | undefined;
  sender?: string | undefined;
}

export type LogQueryField = keyof LogQueryInput;

/** A refused option; the message names it as the caller spells it (--from-seq, fromSeq). */
export class LogQueryError extends Error {
  readonly field: LogQueryField;
  constructor(field: LogQueryField, message: string) {
    super(message);
    this.name = 'LogQueryError';
    this.field = field;
  }
}

export interface LogQuery {
  /** Where to start in the log of `region` (null: the one log of a mesh without regions). */
  startIn: (region: string | null) => Partial<OrderedConsumerOptions>;
  keep: (e: LogEntry) => boolean;
}

/**
 * `fromNow`: with neither since nor fromSeq, start at new payloads (a tail) rather than at the oldest
 * kept (a replay). `spell` names an option in messages. `regions`: every region of the mesh (null:
 * none), where fromSeq names a sequence in each region's log (`eu:1042.us:77`, the event id's form;
 * a region not named is read from its oldest entry kept).
 */
export function parseLogQuery(input: LogQueryInput, fromNow: boolean, spell: (field: LogQueryField) => string, regions: readonly string[] | null = null): LogQuery {
  const keep = filters(input, spell);
  if (regions !== null && input.fromSeq !== undefined && input.since === undefined) {
    const seqs = regionSequences(input.fromSeq, regions, spell);
    return { startIn: (region) => (region !== null && seqs.has(region) ? fromSequence(seqs.get(region)!) : { deliver_policy: DeliverPolicy.All }), keep };
  }
  const start = startFrom(input, fromNow, spell);
  return { startIn: () => start, keep };
}

function regionSequences(text: string, regions: readonly string[], spell: (field: LogQueryField) => string): ReadonlyMap<string, number> {
  const position = parseEventId(text);
  const example = regions.slice(0, 2).map((r, i) => `${r}:${1042 - i * 965}`).join('.');
  if (position === null || position.kind !== 'regions') {
    throw new LogQueryError('fromSeq', `${spell('fromSeq')} names a sequence in each region's log on a mesh with regions, as <region>:<sequence> joined by "." (like ${example}; got "${text.slice(0, 64)}").`);
  }
  const unknown = [...position.seqs.keys()].filter((r) => !regions.includes(r));
  if (unknown.length > 0) throw new LogQueryError('fromSeq', `${spell('fromSeq')} names ${unknown.map((r) => `"${r}"`).join(', ')}, not a region of this mesh (${regions.join(', ')}).`);
  return position.seqs;
}

function startFrom(q: LogQueryInput, fromNow: boolean, spell: (field: LogQueryField) => string): Partial<OrderedConsumerOptions> {
  if (q.since !== undefined && q.fromSeq !== undefined) throw new LogQueryError('since', `Use ${spell('since')} or ${spell('fromSeq')}, not both.`);
  if (q.fromSeq !== undefined) {
    // Beyond 2^53 a sequence is no longer exact in JavaScript, and NATS refuses it as "invalid JSON".
    const seq = parseWholeNumber(q.fromSeq);
    if (seq === null) {
      throw new LogQueryError('fromSeq', `${spell('fromSeq')} must be a stream sequence number, digits only, at most ${Number.MAX_SAFE_INTEGER} (got "${q.fromSeq}").`);
    }
    return fromSequence(seq);
  }
  if (q.since !== undefined) {
    const since = parseSince(q.since);
    if (!since.ok) throw new LogQueryError('since', `${spell('since')} ${since.problem} (got "${q.since}").`);
    return startingAt(since.iso);
  }
  return { deliver_policy: fromNow ? DeliverPolicy.New : DeliverPolicy.All };
}

/**
 * JetStream holds a start time as int64 nanoseconds since 1970, which end on 2262-04-11: a later
 * time wraps round to before the first entry and delivered the whole log (9999-12-31 answered
 * everything where 2030 answered nothing). A later time is held at that last instant, after which
 * nothing can be stored, so it answers nothing, as every time past the end of the log does.
 */
const LATEST_START_TIME_MS = 9_223_372_036_854; // floor((2^63 - 1) ns / 10^6)

/** Deliver from an ISO time on (the event log, the audit trail). */
export function startingAt(iso: string): Partial<OrderedConsumerOptions> {
  const held = Date.parse(iso) > LATEST_START_TIME_MS ? new Date(LATEST_START_TIME_MS).toISOString() : iso;
  return { deliver_policy: DeliverPolicy.StartTime, opt_start_time: held };
}

function filters(q: LogQueryInput, spell: (field: LogQueryField) => string): (e: LogEntry) => boolean {
  const types = q.type?.split(',').map((t) => t.trim()).filter((t) => t !== '');
  // An empty type list would match nothing and show nothing, which reads as "no such payloads".
  if (types?.length === 0) throw new LogQueryError('type', `${spell('type')} needs at least one payload type.`);
  for (const t of types ?? []) if (!isPayloadType(t)) throw new LogQueryError('type', `${spell('type')}: "${t}" is not a payload type.`);
  let sender: string | null = null;
  if (q.sender !== undefined) {
    sender = normaliseUuid(q.sender);
    if (sender === null) throw new LogQueryError('sender', `${spell('sender')} must be a UUID (got "${q.sender}").`);
  }
  return (e) => (types === undefined || types.includes(e.data.type)) && (sender === null || e.meta.uuid === sender);
}
