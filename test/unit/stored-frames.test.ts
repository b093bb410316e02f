// What the gateway delivers of what it reads from NATS. The event log is written by ingresses, but a
// stolen ingress credential writes it too, and any role may aim a consumer at the live subjects:
// a stored message becomes a frame only in the shape an ingress gives it, and a live message counts
// only as JetStream's RePublish wrote it (an attack pass found each of these open).

import { describe, expect, it } from 'vitest';
import { headers as natsHeaders, type Msg, type MsgHdrs } from '@nats-io/nats-core';
import { channelSubject } from '../../services/core/subjects.js';
import { Header } from '../../services/core/wire-headers.js';
import { frameFromMessage } from '../../services/gateway/delivery/frame.js';
import { republished } from '../../services/gateway/delivery/republished.js';

const SENDER = '11111111-1111-4111-8111-111111111111';
const CHANNEL = 'play.example.net';
const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

function stored(over: Record<string, string> = {}): MsgHdrs {
  const h = natsHeaders();
  for (const [name, value] of Object.entries({ [Header.Type]: 'chat', [Header.Sender]: SENDER, [Header.Agent]: 'mod/1.0+abc', ...over })) h.set(name, value);
  return h;
}

const text = (f: ReturnType<typeof frameFromMessage>): string => new TextDecoder().decode(f?.bytes);

describe('a stored message becomes a frame only in the shape an ingress stores', () => {
  it('an ingress’s message is a meta and data pair naming the channel it was stored on', () => {
    const f = frameFromMessage(stored(), encode('{"type":"chat","message":"hi"}'), 7, channelSubject(CHANNEL));
    expect(text(f)).toBe(`event: meta\ndata: {"uuid":"${SENDER}","agent":"mod/1.0+abc","channel":"${CHANNEL}"}\n\nid: 7\ndata: {"type":"chat","message":"hi"}\n\n`);
  });

  it.each([
    ['a body with a raw line break, which would end the SSE event and forge the next (event: close)', stored(), '{"type":"chat"}\n\nevent: close\ndata: {"reason":"banned","reconnect":false}\n\n{}'],
    ['a body with a raw carriage return', stored(), '{"type":"chat",\r"x":1}'],
    ['a body that is not one JSON object', stored(), '"chat"'],
    ['an agent holding a bidi override', stored({ [Header.Agent]: 'mod\u202e1.0' }), '{"type":"chat"}'],
    ['an agent holding a one-byte CSI', stored({ [Header.Agent]: 'mod\u009b2J' }), '{"type":"chat"}'],
    ['a sender that is not a UUID', stored({ [Header.Sender]: 'someone' }), '{"type":"chat"}'],
    ['a direct message to no UUID', stored({ [Header.Type]: 'message', [Header.To]: 'everyone' }), '{"type":"message"}'],
    ['an unknown type', stored({ [Header.Type]: 'takeover' }), '{"type":"takeover"}'],
  ])('%s: not delivered', (_name, headers, body) => {
    expect(frameFromMessage(headers, encode(body), 7, channelSubject(CHANNEL))).toBeNull();
  });

  it('the meta channel is the stored subject’s, whatever a Relay-Channel header says', () => {
    const f = frameFromMessage(stored({ [Header.Channel]: 'elsewhere.example.net' }), encode('{"type":"chat"}'), 7, channelSubject(CHANNEL));
    expect(text(f)).toContain(`"channel":"${CHANNEL}"`);
  });

  it.each([
    ['a subject outside the channels', 'audit.x'],
    ['a subject whose token decodes to a line break', 'channel.play=0aexample'],
    ['a subject whose token decodes to upper case, which no ingress writes', 'channel.PLAY'],
  ])('%s: not delivered', (_name, subject) => {
    expect(frameFromMessage(stored(), encode('{"type":"chat"}'), 7, subject)).toBeNull();
  });

  it('a sender name that is not a player name is not shown as the authoritative sender', () => {
    const f = frameFromMessage(stored({ [Header.SenderName]: 'Bob\u202e' }), encode('{"type":"chat"}'), 7, channelSubject(CHANNEL), 'spec+sender');
    expect(text(f)).toContain(`"authoritativeSender":{"id":"${SENDER}","username":null}`);
  });
});

function live(headers: Array<[string, string]>, reply = '', subject = `live.${channelSubject(CHANNEL)}`): Msg {
  const h = natsHeaders();
  for (const [name, value] of headers) h.append(name, value);
  return { subject, reply, headers: h, data: encode('{}'), sid: 1 } as unknown as Msg;
}

describe('a live message counts only as JetStream’s RePublish wrote it', () => {
  const server: Array<[string, string]> = [
    [Header.Subject, channelSubject(CHANNEL)],
    [Header.Sequence, '12'],
    [Header.LastSequence, '9'],
  ];

  it('a RePublish gives its sequence, the previous one on its subject and the stored subject', () => {
    expect(republished(live(server))).toMatchObject({ seq: 12, previous: 9, subject: channelSubject(CHANNEL) });
  });

  it('a publisher’s own Nats-Sequence, stored ahead of the server’s, is not believed: the last value is the server’s', () => {
    const forged: Array<[string, string]> = [[Header.Sequence, '999999999'], [Header.LastSequence, '999999998'], [Header.Subject, 'channel.other']];
    expect(republished(live([...forged, ...server]))).toMatchObject({ seq: 12, previous: 9, subject: channelSubject(CHANNEL) });
  });

  it('a message a consumer delivered to the live subject (it carries a reply for its acknowledgement) is not a RePublish', () => {
    expect(republished(live(server, '$JS.ACK.RELAY_CLAIM_INDEX.forged.1.5.5.1700000000000000000.0'))).toBeNull();
  });

  it('a direct get of another channel’s frame a role had JetStream answer to this live subject is not a RePublish: it names the channel it was stored on', () => {
    const answer: Array<[string, string]> = [['Nats-Stream', 'RELAY'], [Header.Subject, channelSubject('other.example.net')], [Header.Sequence, '12'], ['Nats-Time-Stamp', '2026-12-06T00:00:00Z'], [Header.LastSequence, '9']];
    expect(republished(live(answer))).toBeNull();
    expect(republished(live(server, '', `live.${channelSubject('other.example.net')}`))).toBeNull();
  });

  it.each([
    ['no sequence', server.filter(([n]) => n !== Header.Sequence)],
    ['a previous sequence at or after its own', [...server, [Header.LastSequence, '12']] as Array<[string, string]>],
    ['no subject', server.filter(([n]) => n !== Header.Subject)],
  ])('%s: not a RePublish', (_name, headers) => {
    expect(republished(live(headers))).toBeNull();
  });
});
