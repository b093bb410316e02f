// When a POST has several things wrong, which refusal the client gets. The order is the client's
// order of fixes: a batch too long is refused before its entries are read; then what is wrong with
// the entries themselves (an unknown type first, then invalid fields, a missing sender, a missing or
// bad channel), every entry's problems listed together; then what the key may not send (403); then
// what is too large to store (413). Whatever the answer, nothing of the batch is published.

import { describe, expect, it } from 'vitest';
import type { Principal } from '../../services/core/auth.js';
import { isRelayError } from '../../services/core/errors.js';
import { Scope, ScopeSet } from '../../services/core/scopes.js';
import { planBatch, type BatchContext, type Plan } from '../../services/ingress/batch.js';

const ALICE = '11111111-1111-1111-1111-111111111111';
const BOB = '22222222-2222-2222-2222-222222222222';
const BANNED = '33333333-3333-3333-3333-333333333333';

function principal(scopes: string[], uuid: string | null = ALICE): Principal {
  return {
    uuid,
    name: uuid === null ? null : 'Alice',
    clientId: 'relay_test',
    key: { clientId: 'relay_test', secretSha256: '0'.repeat(64), scopes, createdAt: '2026-11-23T00:00:00.000Z' },
    scopes: new ScopeSet(scopes),
    agent: 'testmod/1.0',
  };
}

const PLAYER = [Scope.Establish, Scope.Send, Scope.Receive];
const CHAT_ONLY = [Scope.Establish, `${Scope.Send}.chat`];
const BRIDGE = [Scope.Establish, Scope.Unauthenticated, Scope.Send, Scope.Receive];

function context(scopes: string[], overrides: Partial<BatchContext> = {}): BatchContext {
  return {
    principal: principal(scopes),
    channel: 'play.example.net',
    batchMax: 4,
    entryMaxBytes: 200,
    maxPayload: 1024 * 1024,
    isBanned: (uuid) => uuid === BANNED,
    ...overrides,
  };
}

/** What the client is told: status, code and the entries the details name. */
function outcome(body: unknown, ctx: BatchContext): { status: number; code: string; entries: number[] } | Plan {
  try {
    return planBatch(body, ctx);
  } catch (e) {
    if (!isRelayError(e)) throw e;
    return { status: e.status, code: e.code, entries: [...new Set((e.details ?? []).map((d) => d.entry ?? -1))] };
  }
}

const chat = (message = 'hi'): object => ({ type: 'chat', message });
const unknownType = { type: 'teleport' };
const badField = { type: 'ping', x: 'not a number' };
const dm = { type: 'message', to: BOB, message: 'psst' };
const huge = chat('x'.repeat(300));
const envelope = (user: string, message: object, host?: string): object => ({ user, agent: 'bridge/1.0', message, ...(host === undefined ? {} : { host }) });

interface Row {
  name: string;
  body: unknown;
  ctx: BatchContext;
  status: number;
  code: string;
  /** The entries the answer names (details), in order. */
  entries: number[];
}

const rows: Row[] = [
  {
    name: 'a batch over the limit is refused before any entry is read',
    body: [unknownType, badField, chat(), chat(), huge],
    ctx: context(CHAT_ONLY),
    status: 413,
    code: 'batch_too_large',
    entries: [],
  },
  {
    name: 'an unknown type wins over invalid fields, and both entries are named',
    body: [badField, chat(), unknownType],
    ctx: context(PLAYER),
    status: 400,
    code: 'unknown_type',
    entries: [0, 2],
  },
  {
    name: 'invalid fields win over a missing channel',
    body: [chat(), badField],
    ctx: context(PLAYER, { channel: null }),
    status: 400,
    code: 'invalid_payload',
    entries: [0, 1],
  },
  {
    name: 'a bridge without a session sending a bare payload is told to name its sender before its channel',
    body: [envelope(BOB, chat(), 'bad host!'), chat()],
    ctx: context(BRIDGE, { principal: principal(BRIDGE, null) }),
    status: 400,
    code: 'sender_required',
    entries: [0, 1],
  },
  {
    name: 'a request with no channel is invalid_channel',
    body: chat(),
    ctx: context(PLAYER, { channel: null }),
    status: 400,
    code: 'invalid_channel',
    entries: [0],
  },
  {
    name: 'an invalid entry wins over a type the key may not send (400 before 403)',
    body: [dm, badField],
    ctx: context(CHAT_ONLY),
    status: 400,
    code: 'invalid_payload',
    entries: [1],
  },
  {
    name: 'a type the key may not send wins over an entry too large to store (403 before 413)',
    body: [huge, dm],
    ctx: context(CHAT_ONLY),
    status: 403,
    code: 'missing_scope',
    entries: [],
  },
  {
    name: 'an entry too large to store is named when nothing else is wrong',
    body: [chat(), huge],
    ctx: context(PLAYER),
    status: 413,
    code: 'entry_too_large',
    entries: [1],
  },
  {
    name: "an envelope's inner unknown type counts like a bare one",
    body: [envelope(BOB, badField), envelope(BOB, unknownType)],
    ctx: context(BRIDGE),
    status: 400,
    code: 'unknown_type',
    entries: [0, 1],
  },
];

describe('batch error precedence', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    expect(outcome(r.body, r.ctx)).toEqual({ status: r.status, code: r.code, entries: r.entries });
  });

  it('a batch with nothing wrong is planned whole, in order, envelopes for banned accounts set aside', () => {
    const plan = outcome([chat('a'), envelope(BANNED, chat('b')), envelope(BOB, chat('c'), 'other.example.net')], context(BRIDGE));
    expect(plan).toMatchObject({
      entries: [
        { index: 0, sender: ALICE, channel: 'play.example.net' },
        { index: 2, sender: BOB, channel: 'other.example.net' },
      ],
      banned: [{ index: 1, sender: BANNED }],
    });
  });

  it('envelopes from a key that may not re-attribute are dropped silently, not refused (spec 4.3 rule 1)', () => {
    const plan = outcome([chat('a'), envelope(BOB, unknownType)], context(PLAYER));
    expect(plan).toMatchObject({ entries: [{ index: 0 }], banned: [] });
  });
});
