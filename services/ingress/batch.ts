// From a POST body to the list of entries to publish. The whole batch is checked before anything is
// published: any invalid entry or unknown type is a 400, any type outside the send scopes a 403, and
// in both cases nothing is stored. Envelopes from keys without irc.connection.unauthenticated are
// dropped silently (spec 4.3 rule 1).

import type { PayloadType } from '../../schemas/payload-types.js';
import { checkEnvelope, checkPayload, type ValidationIssue } from '../../schemas/validate.js';
import type { Principal } from '../core/auth.js';
import { missingScope } from '../core/auth.js';
import { channelProblem, normaliseChannel } from '../core/channel.js';
import { ErrorCode, RelayError, type ErrorDetail } from '../core/errors.js';
import { Scope } from '../core/scopes.js';

export interface PlannedEntry {
  type: PayloadType;
  /** Readable channel name (meta.channel). */
  channel: string;
  sender: string;
  agent: string | null;
  /** The addressee of a direct message. */
  to: string | null;
  /** The normalised payload as JSON, exactly as it will be delivered. */
  json: string;
}

export interface BatchContext {
  principal: Principal;
  /** The request's channel (query host or header), null when it named none. */
  channel: string | null;
  batchMax: number;
}

// The kinds of problem a batch has decide its error code, the first listed winning.
type ProblemKind = 'unknown_type' | 'payload' | 'sender' | 'channel';
const PROBLEM_CODES: ReadonlyArray<[ProblemKind, ErrorCode]> = [
  ['unknown_type', ErrorCode.UnknownType],
  ['payload', ErrorCode.InvalidPayload],
  ['sender', ErrorCode.SenderRequired],
  ['channel', ErrorCode.InvalidChannel],
];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function planBatch(body: unknown, ctx: BatchContext): PlannedEntry[] {
  const items = Array.isArray(body) ? body : [body];
  if (items.length > ctx.batchMax) {
    throw new RelayError(413, ErrorCode.BatchTooLarge, `A batch may hold at most ${ctx.batchMax} entries; this one has ${items.length}.`);
  }
  const { principal } = ctx;
  const planned: PlannedEntry[] = [];
  const problems: ErrorDetail[] = [];
  const kinds = new Set<ProblemKind>();

  items.forEach((item, entry) => {
    const add = (issues: ValidationIssue[], kind: ProblemKind = 'payload'): void => {
      kinds.add(kind);
      for (const i of issues) problems.push({ entry, path: i.path, reason: i.reason });
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
      planned.push(entryOf(result.type, result.payload, ctx.channel, principal.uuid, principal.agent));
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
    planned.push(entryOf(inner.type, inner.payload, channel, envelope.user, envelope.agent ?? envelope.userAgent ?? null));
  });

  if (problems.length > 0) {
    const code = PROBLEM_CODES.find(([kind]) => kinds.has(kind))![1];
    const count = new Set(problems.map((p) => p.entry)).size;
    const message =
      code === ErrorCode.UnknownType
        ? `Unknown payload type in ${count === 1 ? 'one entry' : `${count} entries`}; nothing was published.`
        : `${count === 1 ? 'One entry is' : `${count} entries are`} invalid; nothing was published.`;
    throw new RelayError(400, code, message, { details: problems.slice(0, 50) });
  }

  for (const p of planned) {
    if (!principal.scopes.canSend(p.type)) {
      throw missingScope(`${Scope.Send}.${p.type}`, `send ${p.type} payloads (nothing was published)`);
    }
  }
  return planned;
}

function entryOf(
  type: PayloadType,
  payload: object,
  channel: string,
  sender: string,
  agent: string | null,
): PlannedEntry {
  const to = type === 'message' ? (payload as { to: string }).to : null;
  return { type, channel, sender, agent, to, json: JSON.stringify(payload) };
}
