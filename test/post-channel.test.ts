// Which channel a POST lands on (spec 4.2 rule 5, DESIGN.md "Channel").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedKey } from '../services/core/keys.js';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;
let key: CreatedKey;

beforeAll(async () => {
  relay = await RelayFixture.start();
  key = await relay.createKey();
});
afterAll(async () => {
  await relay?.close();
});

describe('the channel of a POST', () => {
  it('the host query wins over the header', async () => {
    const s = await relay.connect(relay.headers(relay.player(), key, 'query.example.net'));
    const res = await relay.post({ type: 'chat', message: 'q' }, relay.headers(relay.player(), key, 'header.example.net'), '/?host=query.example.net');
    expect(res.status).toBe(200);
    const pair = await s.nextPair();
    expect(pair.meta.channel).toBe('query.example.net');
  });

  it.each([
    ['  Mixed.Case.Example.NET  ', 'mixed.case.example.net'],
    ['trailing.dot.example.net.', 'trailing.dot.example.net'],
    ['default.port.example.net:25565', 'default.port.example.net'],
    ['other.port.example.net:25566', 'other.port.example.net:25566'],
    ['[2001:DB8::1]:25565', '[2001:db8::1]'],
    ['[2001:db8::1]:25566', '[2001:db8::1]:25566'],
    ['127.0.0.1', '127.0.0.1'],
    ['under_score-and-dash.example', 'under_score-and-dash.example'],
  ])('"%s" is the readable channel "%s"', async (raw, readable) => {
    const s = await relay.connect(relay.headers(relay.player(), key, readable));
    const res = await relay.post({ type: 'chat', message: raw }, relay.headers(relay.player(), key, raw));
    expect(res.status).toBe(200);
    const pair = await s.nextPair();
    expect(pair.meta.channel).toBe(readable);
    expect(pair.data.message).toBe(raw);
  });

  it.each([
    ['a space inside', 'bad host.example.net'],
    ['a slash', 'evil/../host'],
    ['a wildcard', 'a.*.b'],
    ['a NATS tail wildcard', 'a.>'],
    ['nothing but a dot', '.'],
    ['254 characters', `${'a'.repeat(250)}.net`],
    ['an unclosed IPv6 bracket', '[2001:db8::1'],
    ['unicode', 'mineçraft.net'],
  ])('a channel with %s is refused with 400 invalid_channel', async (_what, raw) => {
    const res = await relay.post({ type: 'chat', message: 'x' }, relay.headers(relay.player(), key, null), `/?host=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_channel');
    expect(String(res.body['message'])).toMatch(/channel/);
  });

  it('a POST naming no channel at all is refused with 400 and publishes nothing', async () => {
    const res = await relay.post({ type: 'chat', message: 'nowhere' }, relay.headers(relay.player(), key, null));
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_channel');
    expect(JSON.stringify(res.body['details'])).toMatch(/X-IRC-Multiplayer-Server/);
  });
});
