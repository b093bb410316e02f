// Who hears what, as a table: every payload type x the receive scopes a key can hold x a player, a
// bridge with a session and a bridge without one x own or others' frames x (for direct messages)
// addressed to the reader or not. Frames are built from NATS headers as the gateway builds them,
// listeners from scope lists as keys hold them; the expected answer comes from the spec's rules as
// written below, not from the code under test. The end-to-end version is test/who-hears-what.test.ts.

import { channelSubject } from '../../services/core/subjects.js';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { PAYLOAD_TYPES, type PayloadType } from '../../schemas/payload-types.js';
import { Scope, ScopeSet } from '../../services/core/scopes.js';
import { Header } from '../../services/core/wire-headers.js';
import { hears, type Listener } from '../../services/gateway/delivery/delivery-rules.js';
import { frameFromMessage, type Frame } from '../../services/gateway/delivery/frame.js';

const READER = '11111111-1111-1111-1111-111111111111';
const OTHER = '22222222-2222-2222-2222-222222222222';
const THIRD = '33333333-3333-3333-3333-333333333333';

type Receive = 'nothing' | 'everything' | PayloadType;
type Who = 'a player' | 'a bridge with a session' | 'a bridge without a session';

interface Case {
  who: Who;
  receive: Receive;
  type: PayloadType;
  /** The frame is the reader's own. */
  own: boolean;
  /** Direct messages only: addressed to the reader. */
  toReader: boolean;
}

/** The spec's rules (4.1 rule 3, 5.4 rules 2-4), each a sentence, in the order they decide. */
function spec(c: Case): boolean {
  const bridge = c.who !== 'a player';
  const covers = (t: PayloadType): boolean => c.receive === 'everything' || c.receive === t;
  // 5.4 rules 3 and 4: a direct message reaches its addressee, or any bridge (irc.connection.
  // unauthenticated); either way only if the receive scopes cover `message` (rule 2). Being its
  // sender is not enough: a DM is not echoed to the account that sent it to someone else.
  if (c.type === 'message') return (c.toReader || bridge) && covers('message');
  // 4.1 rule 3: the stream delivers the account's own frames (irc.connection.establish).
  if (c.own) return true;
  // 5.4 rule 4: a key narrowed to one receive type still hears keepalives; a key with no receive
  // scope hears none of the others' frames.
  if (c.type === 'keepalive') return c.receive !== 'nothing';
  // 5.4 rule 2: another's payload of a type outside the receive scopes is never delivered.
  return covers(c.type);
}

function listener(c: Case): Listener {
  const scopes: string[] = [Scope.Establish];
  if (c.who !== 'a player') scopes.push(Scope.Unauthenticated);
  if (c.receive === 'everything') scopes.push(Scope.Receive);
  else if (c.receive !== 'nothing') scopes.push(`${Scope.Receive}.${c.receive}`);
  const set = new ScopeSet(scopes);
  return { account: c.who === 'a bridge without a session' ? null : READER, receiveMask: set.receiveMask, bridge: set.unauthenticated };
}

function frame(c: Case): Frame {
  const h = natsHeaders();
  h.set(Header.Type, c.type);
  h.set(Header.Sender, c.own ? READER : OTHER);
  if (c.type === 'message') h.set(Header.To, c.toReader ? READER : THIRD);
  const f = frameFromMessage(h, new TextEncoder().encode(JSON.stringify({ type: c.type })), 1, channelSubject('play.example.net'));
  if (f === null) throw new Error(`no frame for ${c.type}`);
  return f;
}

function name(c: Case): string {
  const scope = c.receive === 'nothing' ? 'no receive scope' : c.receive === 'everything' ? 'irc.messages.receive' : `receive.${c.receive}`;
  const whose = c.type === 'message' ? `${c.own ? 'its own' : "another's"} DM ${c.toReader ? 'to it' : 'to someone else'}` : `${c.own ? 'its own' : "another's"} ${c.type}`;
  return `${c.who} with ${scope} ${spec(c) ? 'hears' : 'does not hear'} ${whose}`;
}

const WHO: readonly Who[] = ['a player', 'a bridge with a session', 'a bridge without a session'];
const RECEIVE: readonly Receive[] = ['nothing', 'everything', ...PAYLOAD_TYPES];

const cases: Case[] = [];
for (const who of WHO) {
  for (const receive of RECEIVE) {
    for (const type of PAYLOAD_TYPES) {
      // A bridge without a session has no account: nothing is its own, and no DM names it.
      for (const own of who === 'a bridge without a session' ? [false] : [false, true]) {
        for (const toReader of type !== 'message' ? [false] : who === 'a bridge without a session' ? [false] : [false, true]) {
          // Sending a DM to oneself is both own and addressed to oneself; one to someone else while
          // being the sender is the echo case; both are in the table.
          cases.push({ who, receive, type, own, toReader });
        }
      }
    }
  }
}

describe('who hears what (spec 4.1 rule 3, 5.4 rules 2-4)', () => {
  it('covers every type, receive scope and kind of listener', () => {
    expect(cases.length).toBe(2 * 13 * (10 * 2 + 1 * 4) + 13 * (10 + 1));
    expect(cases.filter(spec).length).toBeGreaterThan(0);
    expect(cases.filter((c) => !spec(c)).length).toBeGreaterThan(0);
  });

  it.each(cases.map((c) => [name(c), c] as const))('%s', (_name, c) => {
    expect(hears(listener(c), frame(c))).toBe(spec(c));
  });
});
