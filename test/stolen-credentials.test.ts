// What a stolen credential of an internet-facing role tried against a running relay, found by an
// attack pass after the permissions were tightened, each refused or harmless now. The relay runs
// through its own role users (infra/nats/permissions.conf); the attacker holds only the NATS
// password of one role. A listener's next pair after each attempt must be a sentinel posted through
// the real ingress: nothing the attacker did reached it, and the channel still works.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { CreatedKey } from '../services/core/keys.js';
import { heartbeatKey } from '../services/core/node-heartbeat.js';
import { BUCKET_BANS, CLAIM_INDEX_STREAM, channelSubject, liveSubject } from '../services/core/subjects.js';
import { Header } from '../services/core/wire-headers.js';
import { permissionViolationOf } from '../services/core/nats-refusal.js';
import { startProfileApi, type FakeProfileApi } from './helpers/profile-api.js';
import { RelayFixture } from './helpers/relay.js';
import { startRoleNats, type RoleNats } from './helpers/role-nats.js';
import { runCliJson } from './helpers/cli.js';
import type { SseStream } from './helpers/sse-client.js';

const UUID = '00000000-0000-4000-8000-00000000000a';
let nats: RoleNats;
let profile: FakeProfileApi;
let ingress: RelayFixture;
let gateway: RelayFixture;
let key: CreatedKey;

beforeAll(async () => {
  nats = await startRoleNats();
  profile = await startProfileApi();
  ingress = await RelayFixture.start({ service: 'ingress', nats, profile, setup: false, env: { ...nats.env('ingress'), RELAY_NODE_ID: 'ingress-1' } });
  gateway = await RelayFixture.start({ service: 'gateway', nats, profile, setup: false, env: { ...nats.env('gateway'), RELAY_NODE_ID: 'gateway-1' } });
  key = await runCliJson<CreatedKey>(['keys', 'create', '--scopes', 'irc.connection.establish,irc.messages.send,irc.messages.receive', '--json'], nats.env('cli'));
  await runCliJson(['bans', 'add', UUID, '--reason', 'by an operator', '--json'], nats.env('cli')).catch(() => undefined);
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await ingress?.close();
  await profile?.close();
  await nats?.stop();
});

/** A listener on `channel`, subscribed. */
async function listen(channel: string): Promise<SseStream> {
  return gateway.connect(gateway.headers(gateway.player(), key, channel));
}

/** Posts a sentinel through the real ingress and expects it to be the listener's very next pair. */
async function sentinelIsNext(stream: SseStream, channel: string): Promise<void> {
  const message = `sentinel ${Math.random()}`;
  expect((await ingress.post({ type: 'chat', message }, ingress.headers(ingress.player(), key, channel))).status).toBe(200);
  const next = await stream.nextPair();
  expect(next.data).toEqual({ type: 'chat', message });
  expect(stream.events.some((e) => e.event === 'close')).toBe(false);
}

/** Headers of a stored payload as an ingress writes them, for an attacker writing as one. */
function payloadHeaders(channel: string, extra: Array<[string, string]> = []): ReturnType<typeof natsHeaders> {
  const h = natsHeaders();
  h.set(Header.Type, 'chat');
  h.set(Header.Sender, UUID);
  h.set(Header.Channel, channel);
  h.set(Header.Agent, 'mod/1.0');
  for (const [name, value] of extra) h.append(name, value);
  return h;
}

const refusal = async (work: Promise<unknown>): Promise<string> => String(await work.then(() => 'stored', (e: unknown) => (e instanceof Error ? e.message : String(e))));

describe('a stolen credential against a running relay', () => {
  it('an ingress cannot roll a bucket up: one publish with Nats-Rollup on its own ban key left every operator’s ban gone', async () => {
    const nc: NatsConnection = await nats.connect('ingress');
    const h = natsHeaders();
    h.set('KV-Operation', 'PURGE');
    h.set('Nats-Rollup', 'all');
    expect(await refusal(jetstream(nc).publish(`$KV.${BUCKET_BANS}.auto.ingress.x`, '', { headers: h }))).toMatch(/rollup/i);
    const bans = await new Kvm(await nats.connect('cli')).open(BUCKET_BANS);
    expect((await bans.get(UUID))?.operation).toBe('PUT');
  });

  it('a gateway cannot roll the heartbeats up either: the ingress’s heartbeat stays', async () => {
    const nc = await nats.connect('gateway');
    const h = natsHeaders();
    h.set('KV-Operation', 'PURGE');
    h.set('Nats-Rollup', 'all');
    expect(await refusal(jetstream(nc).publish(`$KV.relay-nodes.${heartbeatKey('gateway', 'x')}`, '', { headers: h }))).toMatch(/rollup/i);
    const subject = `$KV.relay-nodes.${heartbeatKey('ingress', 'ingress-1')}`;
    const left = await (await jetstreamManager(await nats.connect('cli'))).streams.info('KV_relay-nodes', { subjects_filter: subject });
    expect(left.state.subjects?.[subject]).toBe(1);
  });

  it('an ingress storing a body with raw line breaks cannot forge a close event, a retry or an id in a client’s stream', async () => {
    const channel = 'inject.example.net';
    const stream = await listen(channel);
    const body = '{"type":"chat"}\n\nevent: close\ndata: {"reason":"banned","reconnect":false}\n\nretry: 86400000\nid: 999999999\n\n{}';
    await jetstream(await nats.connect('ingress')).publish(channelSubject(channel), body, { headers: payloadHeaders(channel) });
    await sentinelIsNext(stream, channel);
    expect(stream.retries.filter((r) => r > 60_000)).toEqual([]);
  });

  it('an ingress storing its own Nats-Sequence cannot silence the channel: the frames after it still arrive', async () => {
    const channel = 'sequence.example.net';
    const stream = await listen(channel);
    const forged: Array<[string, string]> = [['Nats-Sequence', '999999999'], ['Nats-Last-Sequence', '0'], ['Nats-Subject', channelSubject(channel)]];
    await jetstream(await nats.connect('ingress')).publish(channelSubject(channel), JSON.stringify({ type: 'chat', message: 'as anyone' }), { headers: payloadHeaders(channel, forged) });
    // A stolen ingress may post as anyone (it vouches for senders): its post arrives, with its true sequence.
    const posted = await stream.nextPair();
    expect(posted.data).toEqual({ type: 'chat', message: 'as anyone' });
    expect(posted.id).toBeLessThan(999_999_999);
    await sentinelIsNext(stream, channel);
  });

  it('a gateway cannot make a consumer at all, so it cannot aim one at the live subject to deliver a payload into a channel', async () => {
    const channel = 'pushed.example.net';
    const stream = await listen(channel);
    const nc = await nats.connect('gateway');
    const forged: Array<[string, string]> = [['Nats-Sequence', '1'], ['Nats-Last-Sequence', '0'], ['Nats-Subject', channelSubject(channel)]];
    await jetstream(nc).publish('relay.claim-index.forged', JSON.stringify({ type: 'chat', message: 'from a gateway' }), { headers: payloadHeaders(channel, forged) });
    const jsm = await jetstreamManager(nc);
    const made = jsm.consumers.add(CLAIM_INDEX_STREAM, { deliver_subject: liveSubject(channel), filter_subject: 'relay.claim-index.forged', ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
    expect(permissionViolationOf(await made.then(() => null, (e: unknown) => e))?.subject).toMatch(new RegExp(`^\\$JS\\.API\\.CONSUMER\\.CREATE\\.${CLAIM_INDEX_STREAM}`));
    await sentinelIsNext(stream, channel);
  });
});
