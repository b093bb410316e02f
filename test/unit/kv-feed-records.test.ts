// What a bucket's change feed message counts as (services/core/kv-feed-load.ts). Anything with the
// right to publish into the role's own account can make JetStream answer onto a feed subject (a
// direct get with its reply subject set there), and any writer stores Nats-* headers of its own
// choosing ahead of the server's: an attack pass lifted an operator's ban and had a forged key
// accepted that way. A record counts only as the server's last headers say, for this bucket and
// the very key of the subject it came on.

import { describe, expect, it } from 'vitest';
import { headers as natsHeaders, type Msg } from '@nats-io/nats-core';
import { decodeFeed } from '../../services/core/kv-feed-load.js';
import { isKey } from '../../services/core/kv-internals.js';

const UUID = '11111111-2222-4333-8444-555555555555';

function feed(subject: string, headers: Array<[string, string]>, reply = ''): Msg {
  const h = natsHeaders();
  for (const [name, value] of headers) h.append(name, value);
  return { subject, reply, headers: h, data: new TextEncoder().encode('{}'), sid: 1 } as unknown as Msg;
}

const server = (stream: string, subject: string, seq: number): Array<[string, string]> => [
  ['Nats-Stream', stream],
  ['Nats-Subject', subject],
  ['Nats-Sequence', String(seq)],
  ['Nats-Last-Sequence', '0'],
];

describe('a change feed message counts only as the server wrote it, for its own key', () => {
  it('a RePublish of a put and of a delete', () => {
    expect(decodeFeed(feed(`relay.kv.relay-bans.${UUID}`, server('KV_relay-bans', `$KV.relay-bans.${UUID}`, 5)), 'relay-bans')).toMatchObject({ key: UUID, revision: 5, operation: 'PUT' });
    const del = feed(`relay.kv.relay-bans.${UUID}`, [['KV-Operation', 'DEL'], ...server('KV_relay-bans', `$KV.relay-bans.${UUID}`, 6)]);
    expect(decodeFeed(del, 'relay-bans')).toMatchObject({ key: UUID, revision: 6, operation: 'DEL' });
  });

  it('an ingress’s own ban key stored with the headers of an operator’s ban and a delete deletes only its own key', () => {
    const forged: Array<[string, string]> = [['Nats-Stream', 'KV_relay-bans'], ['Nats-Subject', `$KV.relay-bans.${UUID}`], ['Nats-Sequence', '99'], ['KV-Operation', 'DEL']];
    const record = decodeFeed(feed('relay.kv.relay-bans.auto.ingress.x', [...forged, ...server('KV_relay-bans', '$KV.relay-bans.auto.ingress.x', 7)]), 'relay-bans');
    expect(record).toMatchObject({ key: 'auto.ingress.x', revision: 7 });
  });

  it('a direct get of another bucket’s record answered onto the keys feed is not a key', () => {
    const answer = [['Nats-Stream', 'KV_relay-keys'], ['Nats-Subject', '$KV.relay-keys.forged'], ...server('KV_relay-idempotency', '$KV.relay-idempotency.k', 3), ['Nats-Time-Stamp', '2026-12-06T00:00:00Z']] as Array<[string, string]>;
    expect(decodeFeed(feed('relay.kv.relay-keys.forged', answer), 'relay-keys')).toBeNull();
  });

  it('a direct get of one real key answered onto another key’s feed subject is not that key', () => {
    expect(decodeFeed(feed('relay.kv.relay-keys.other', server('KV_relay-keys', '$KV.relay-keys.real', 3)), 'relay-keys')).toBeNull();
  });

  it.each([
    ['a reply subject (a consumer’s delivery)', feed(`relay.kv.relay-bans.${UUID}`, server('KV_relay-bans', `$KV.relay-bans.${UUID}`, 5), '$JS.ACK.x')],
    ['no headers (an acknowledgement or an API answer)', { subject: `relay.kv.relay-bans.${UUID}`, reply: '', headers: undefined, data: new Uint8Array(), sid: 1 } as unknown as Msg],
    ['a key with a wildcard token', feed('relay.kv.relay-bans.auto.ingress.>', server('KV_relay-bans', '$KV.relay-bans.auto.ingress.>', 5))],
    ['no sequence', feed(`relay.kv.relay-bans.${UUID}`, server('KV_relay-bans', `$KV.relay-bans.${UUID}`, 5).filter(([n]) => n !== 'Nats-Sequence'))],
  ])('%s: not a record', (_name, msg) => {
    expect(decodeFeed(msg, 'relay-bans')).toBeNull();
  });

  it.each([['gateway.n1', true], ['auto.ingress.x', true], ['gateway.>', false], ['*', false], ['a..b', false], ['', false]])('%s is a key: %s', (key, yes) => {
    expect(isKey(key)).toBe(yes);
  });
});
