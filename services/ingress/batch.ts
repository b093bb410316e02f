// From a POST body to the list of entries to publish. Everything that can refuse an entry is checked
// here, before anything is published: any invalid entry or unknown type is a 400, any type outside
// the send scopes a 403, an entry too large to store a 413, and in every case nothing is stored.
// Even the NATS headers are built here, so a value they cannot carry is a 400, not a failure after
// part of the batch went out. Envelopes from keys without irc.connection.unauthenticated are dropped
// silently (spec 4.3 rule 1); envelopes naming a banned account are dropped and counted.

import { headers as natsHeaders, type MsgHdrs } from '@nats-io/nats-core';
import { PLAYER_NAME_PATTERN } from '../../schemas/common.js';
import type { PayloadType } from '../../schemas/payload-types.js';
import { checkEnvelope, checkPayload, isObject, type ValidationIssue } from '../../schemas/validate.js';
import type { Principal } from '../core/auth.js';
import { missingScope } from '../core/auth.js';
import { channelProblem, normaliseChannel } from '../core/channel.js';
import { RelayError, type ErrorDetail, type ErrorCode } from '../core/errors.js';
import { Scope } from '../core/scopes.js';
import { Header } from '../core/wire-headers.js';

const PLAYER_NAME = new RegExp(PLAYER_NAME_PATTERN);

export interface PlannedEntry {
  /** Position in the POST body (error details name it). */
  index: number;
  type: PayloadType;
  /** Readable channel name (meta.channel). */
  channel: string;
  sender: string;
  agent: string | null;
  /** The addressee of a direct message. */
  to: string | null;
  /** The normalised payload as JSON, exactly as it will be delivered. */
  json: string;
  /** Its size in bytes (UTF-8). */
  bytes: number;
  /** What the gateways read instead of the body (sender, agent, type, channel, addressee). */
  headers: MsgHdrs;
}

export interface Plan {
  entries: PlannedEntry[];
  /** Envelopes not published because they name a banned account (still part of what the request is). */
  banned: PlannedEntry[];
}

export interface BatchContext {
  principal: Principal;
  /** The request's channel (query host or header), null when it named none. */
  channel: string | null;
  batchMax: number;
  /** Largest payload JSON of one entry. */
  entryMaxBytes: number;
  /** Largest message NATS accepts (payload and headers). */
  maxPayload: number;
  isBanned(uuid: string): boolean;
}

/** Room left in a message for the headers the publisher adds (time, Nats-Msg-Id). */
const PUBLISH_HEADER_ROOM = 256;
/** More than our own headers can take: names, two UUIDs, a channel (253) and an agent (256 characters, up to 3 bytes each). */
const MAX_HEADER_BYTES = 2048;

// The kinds of problem a batch has decide its error code, the first listed winning.
type ProblemKind = 'unknown_type' | 'payload' | 'sender' | 'channel';
const PROBLEM_CODES: ReadonlyArray<[ProblemKind, ErrorCode]> = [
  ['unknown_type', 'unknown_type'],
  ['payload', 'invalid_payload'],
  ['sender', 'sender_required'],
  ['channel', 'invalid_channel'],
];

export function planBatch(body: unknown, ctx: BatchContext): Plan {
  const items = Array.isArray(body) ? body : [body];
  if (items.length > ctx.batchMax) {
    throw new RelayError('batch_too_large', `A batch may hold at most ${ctx.batchMax} entries; this one has ${items.length}.`);
  }
  const { principal } = ctx;
  const planned: PlannedEntry[] = [];
  const problems: ErrorDetail[] = [];
  const kinds = new Set<ProblemKind>();
  const banned: PlannedEntry[] = [];

  items.forEach((item, entry) => {
    const add = (issues: ValidationIssue[], kind: ProblemKind = 'payload'): void => {
      kinds.add(kind);
      for (const i of issues) problems.push({ entry, path: i.path, reason: i.reason });
    };
    // The agent is the one free-text value that goes into a NATS header.
    const plan = (built: PlannedEntry | null, agentPath: string): void => {
      if (built === null) add([{ path: agentPath, reason: 'the agent must not contain line breaks' }]);
      else planned.push(built);
    };
    if (!isObject(item)) {
      add([{ path: '', reason: 'an entry must be a payload object or a re-attribution envelope' }]);
      return;
    }
    if ('type' in item) {
      const result = checkPayload(item);
      if (!result.ok) {
        add(result.issues, result.unknownType ? 'unknown_type' : 'payload');
        return;
      }
      if (principal.uuid === null) {
        add([{ path: '', reason: 'a bridge without a session must wrap each payload in an envelope naming its user' }], 'sender');
        return;
      }
      if (ctx.channel === null) {
        add([{ path: '', reason: 'no channel: send X-IRC-Multiplayer-Server or ?host=' }], 'channel');
        return;
      }
      plan(entryOf(entry, result.type, result.payload, ctx.channel, { uuid: principal.uuid, name: principal.name, agent: principal.agent }), '');
      return;
    }
    // Neither a payload (no `type`) nor an envelope (no `message`): a mistake worth saying so.
    if (!('message' in item)) {
      add([{ path: '', reason: 'an entry needs a "type" (a payload) or a "message" (a re-attribution envelope)' }]);
      return;
    }
    // No `type`: a re-attribution envelope. Honoured only for bridge keys, silently dropped otherwise.
    if (!principal.scopes.unauthenticated) return;
    const shell = checkEnvelope(item);
    if (!shell.ok) {
      add(shell.issues);
      return;
    }
    const inner = checkPayload(shell.envelope.message, '/message');
    if (!inner.ok) {
      add(inner.issues, inner.unknownType ? 'unknown_type' : 'payload');
      return;
    }
    const { envelope } = shell;
    const rawHost = envelope.host ?? envelope.channel;
    let channel = ctx.channel;
    if (rawHost !== undefined) {
      const problem = channelProblem(rawHost);
      if (problem !== null) {
        add([{ path: envelope.host !== undefined ? '/host' : '/channel', reason: problem }], 'channel');
        return;
      }
      channel = normaliseChannel(rawHost);
    }
    if (channel === null) {
      add([{ path: '/host', reason: 'no channel: the envelope names no host and the request no X-IRC-Multiplayer-Server' }], 'channel');
      return;
    }
    // A bridge must not give a banned account the voice the ban took away (any UUID spelling: the
    // envelope's user is normalised by now).
    // An envelope names no profile: the relay knows no name for its user.
    const built = entryOf(entry, inner.type, inner.payload, channel, { uuid: envelope.user, name: null, agent: envelope.agent ?? envelope.userAgent ?? null });
    if (built !== null && ctx.isBanned(envelope.user)) {
      banned.push(built);
      return;
    }
    plan(built, envelope.agent !== undefined ? '/agent' : '/userAgent');
  });

  if (problems.length > 0) {
    const code = PROBLEM_CODES.find(([kind]) => kinds.has(kind))![1];
    const count = new Set(problems.map((p) => p.entry)).size;
    const message =
      code === 'unknown_type'
        ? `Unknown payload type in ${count === 1 ? 'one entry' : `${count} entries`}; nothing was published.`
        : `${count === 1 ? 'One entry is' : `${count} entries are`} invalid; nothing was published.`;
    throw new RelayError(code, message, { details: problems.slice(0, 50) });
  }

  for (const p of planned) {
    if (!principal.scopes.canSend(p.type)) {
      throw missingScope(`${Scope.Send}.${p.type}`, `send ${p.type} payloads (nothing was published)`);
    }
  }
  checkSizes(planned, ctx);
  return { entries: planned, banned };
}

/** An entry NATS cannot carry would fail at every retry: refuse it up front, naming it. */
function checkSizes(planned: readonly PlannedEntry[], ctx: BatchContext): void {
  const tooLarge: ErrorDetail[] = [];
  for (const p of planned) {
    const payloadBytes = p.bytes;
    // Headers are counted only near the limit: they are small (UUIDs, a channel, an agent of 256 at most).
    const messageBytes = payloadBytes + PUBLISH_HEADER_ROOM > ctx.maxPayload - MAX_HEADER_BYTES ? payloadBytes + headerBytes(p.headers) + PUBLISH_HEADER_ROOM : 0;
    if (payloadBytes > ctx.entryMaxBytes) {
      tooLarge.push({ entry: p.index, path: '', reason: `the entry is ${payloadBytes} bytes as JSON; at most ${ctx.entryMaxBytes} are stored` });
    } else if (messageBytes > ctx.maxPayload) {
      tooLarge.push({ entry: p.index, path: '', reason: `the entry is ${messageBytes} bytes with its headers; the event log accepts at most ${ctx.maxPayload}` });
    }
  }
  if (tooLarge.length > 0) {
    throw new RelayError('entry_too_large', `${tooLarge.length === 1 ? 'One entry is' : `${tooLarge.length} entries are`} too large to store; nothing was published.`, {
      details: tooLarge.slice(0, 50),
    });
  }
}

/** The entry as it will be published, or null when its agent cannot be carried in a header. */
function entryOf(index: number, type: PayloadType, payload: object, channel: string, from: Sender): PlannedEntry | null {
  const { uuid: sender, agent } = from;
  const to = type === 'message' ? (payload as { to: string }).to : null;
  let headers: MsgHdrs;
  try {
    headers = headersOf(type, channel, from, to);
  } catch {
    return null;
  }
  const json = JSON.stringify(payload);
  return { index, type, channel, sender, agent, to, json, bytes: Buffer.byteLength(json), headers };
}

/** Bytes the headers take in a NATS message ("NATS/1.0", one "Name: value" line each). */
function headerBytes(h: MsgHdrs): number {
  let n = 12;
  for (const k of h.keys()) n += Buffer.byteLength(`${k}: ${h.get(k)}\r\n`);
  return n;
}

/** Who an entry is from, as its headers say it. */
interface Sender {
  uuid: string;
  /** The profile name of a verified session; null for an envelope's user. */
  name: string | null;
  agent: string | null;
}

function headersOf(type: PayloadType, channel: string, from: Sender, to: string | null): MsgHdrs {
  const h = natsHeaders();
  h.set(Header.Sender, from.uuid);
  // A profile name is a player name (3-16 of [A-Za-z0-9_]); anything else is not carried.
  if (from.name !== null && PLAYER_NAME.test(from.name)) h.set(Header.SenderName, from.name);
  if (from.agent !== null) h.set(Header.Agent, from.agent);
  h.set(Header.Type, type);
  h.set(Header.Channel, channel);
  if (to !== null) h.set(Header.To, to);
  return h;
}
