// Least privilege, proven by enumeration as the route tables prove the HTTP surface: against a real
// nats-server loaded with infra/nats/permissions.conf, every role tries every JetStream API verb on
// every stream and bucket of the relay, the account-wide verbs, the plain subjects and the
// subscriptions (test/helpers/nats-probes.ts), and exactly the set in ALLOWED gets through. Then
// the attacks of issue 26, each as a test of its own: what a stolen credential of an internet-facing
// role tried, and that it no longer erases what another role wrote.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { permissionViolationOf } from '../services/core/nats-refusal.js';
import { AUDIT_STREAM_NAME, BUCKET_BANS, BUCKET_KEYS, STREAM_NAME, channelSubject } from '../services/core/subjects.js';
import { heartbeatKey } from '../services/core/node-heartbeat.js';
import { allProbes, apiNames, kvFeedNames, kvReadNames, kvWatchNames, permitted, streamReadNames } from './helpers/nats-probes.js';
import { startRoleNats, ROLES, type Role, type RoleNats } from './helpers/role-nats.js';
import { runCliJson } from './helpers/cli.js';
import type { CreatedKey } from '../services/core/keys.js';

const UUID = '00000000-0000-4000-8000-000000000000';
const ALL_STREAMS = ['RELAY', 'RELAY_AUDIT', 'RELAY_CLAIM_INDEX', 'KV_relay-keys', 'KV_relay-bans', 'KV_relay-streams', 'KV_relay-nodes', 'KV_relay-idempotency'];
/** What the admin service and the CLI both do: keys, bans, the audit trail; read the log, the trail, claims and heartbeats. */
const OPERATOR = [
  'pub $JS.API.INFO',
  ...streamReadNames('RELAY', 'channel.probe'),
  'pub $JS.API.DIRECT.GET.RELAY.channel.probe',
  ...streamReadNames('RELAY_AUDIT', 'audit.probe'),
  ...kvReadNames('relay-keys'), ...kvFeedNames('relay-keys'),
  ...kvReadNames('relay-bans'), ...kvFeedNames('relay-bans'),
  'pub $JS.API.STREAM.INFO.KV_relay-streams', ...kvWatchNames('relay-streams'),
  ...kvFeedNames('relay-nodes'),
  'pub audit.probe', 'pub $KV.relay-keys.probe', 'pub $KV.relay-bans.probe',
  ...['ingress', 'gateway', 'all'].map((s) => `pub $KV.relay-bans.auto.${s}.${UUID}`), `pub $KV.relay-bans.${UUID}`,
];

/** Every subject each role's permissions let through; everything else in allProbes() must be refused. */
const ALLOWED: Record<Role, string[]> = {
  ingress: [
    'pub $JS.API.INFO',
    'pub $JS.API.STREAM.INFO.RELAY', 'pub channel.probe',
    ...kvReadNames('relay-keys'), ...kvFeedNames('relay-keys'),
    ...kvReadNames('relay-bans'), ...kvFeedNames('relay-bans'), `pub $KV.relay-bans.auto.ingress.${UUID}`,
    'pub $JS.API.STREAM.INFO.KV_relay-nodes', `pub $KV.relay-nodes.${heartbeatKey('ingress', 'probe')}`,
    ...kvReadNames('relay-idempotency'), 'pub $KV.relay-idempotency.probe',
    'sub _INBOX.ingress.>',
  ],
  // No consumer of any kind: the log and the claim index are read from their leaders, buckets followed by their feeds.
  gateway: [
    'pub $JS.API.INFO',
    'pub $JS.API.STREAM.INFO.RELAY', 'pub $JS.API.STREAM.MSG.GET.RELAY', 'pub $JS.API.DIRECT.GET.RELAY.channel.probe',
    'pub $JS.API.STREAM.INFO.RELAY_CLAIM_INDEX', 'pub $JS.API.STREAM.MSG.GET.RELAY_CLAIM_INDEX', 'pub relay.claim-index.probe',
    ...kvReadNames('relay-keys'), ...kvFeedNames('relay-keys'),
    ...kvReadNames('relay-bans'), ...kvFeedNames('relay-bans'), `pub $KV.relay-bans.auto.gateway.${UUID}`,
    ...kvReadNames('relay-streams'), 'pub $JS.API.STREAM.MSG.GET.KV_relay-streams', 'pub $KV.relay-streams.probe',
    ...kvFeedNames('relay-nodes'), `pub $KV.relay-nodes.${heartbeatKey('gateway', 'probe')}`,
    'pub relay.claim-notice.probe', 'pub relay.owner-census.ask', 'pub relay.owner-census.answer.probe',
    'sub live.channel.>', 'sub relay.claim-notice.>', 'sub relay.owner-census.ask', 'sub relay.owner-census.answer.*', 'sub _INBOX.gateway.>',
  ],
  admin: [...OPERATOR, 'sub live.channel.>', 'sub _INBOX.admin.>'],
  // The operator: the same, and `relay setup` (create and update, never delete or purge).
  cli: [
    ...OPERATOR,
    ...apiNames('STREAM.INFO', 'RELAY_CLAIM_INDEX', 'KV_relay-idempotency'),
    ...apiNames('STREAM.CREATE', ...ALL_STREAMS),
    ...apiNames('STREAM.UPDATE', ...ALL_STREAMS),
    'pub $JS.API.STREAM.MSG.GET.RELAY',
    'sub _INBOX.cli.>',
  ],
};

let nats: RoleNats;

beforeAll(async () => {
  nats = await startRoleNats();
}, 60_000);

afterAll(async () => {
  await nats?.stop();
});

describe('each NATS role may use exactly the subjects of its table', () => {
  it.each(ROLES)('%s: every JetStream verb on every stream and bucket, every plain subject and subscription, and only its table gets through', async (role) => {
    const nc = await nats.connect(role);
    const allowed: string[] = [];
    for (const probe of allProbes()) if (await permitted(nc, probe)) allowed.push(probe.name);
    const expected = [...new Set(ALLOWED[role])];
    expect({ 'allowed but not in the table': allowed.filter((p) => !expected.includes(p)), 'in the table but refused': expected.filter((p) => !allowed.includes(p)) }).toEqual({
      'allowed but not in the table': [],
      'in the table but refused': [],
    });
    // The table names only subjects the probes try: a typo in it cannot pass for a refusal.
    const probed = new Set(allProbes().map((p) => p.name));
    expect(expected.filter((p) => !probed.has(p))).toEqual([]);
  }, 120_000);
});

/** What the attacker sent: the raw update request, new limits in the stream's own configuration. */
function updateRequest(nc: NatsConnection, stream: string, config: object): Promise<unknown> {
  return nc.request(`$JS.API.STREAM.UPDATE.${stream}`, JSON.stringify(config), { timeout: 5000 });
}

/** A refused request's subject, or null when the server let it through. */
async function refusedSubject(work: Promise<unknown>): Promise<string | null> {
  const outcome = await work.then(() => null, (e: unknown) => e);
  return permissionViolationOf(outcome)?.subject ?? null;
}

describe('what a stolen credential of an internet-facing role tried, refused', () => {
  let operator: NatsConnection;
  let key: CreatedKey;

  beforeAll(async () => {
    operator = await nats.connect('cli');
    key = await runCliJson<CreatedKey>(['keys', 'create', '--scopes', 'irc.connection.establish', '--json'], nats.env('cli'));
    await runCliJson(['bans', 'list', '--json'], nats.env('cli'));
    expect((await runCliJson<unknown[]>(['audit', '--json'], nats.env('cli'))).length).toBeGreaterThan(0);
    await new Kvm(operator).open(BUCKET_BANS).then((kv) => kv.put(UUID, JSON.stringify({ uuid: UUID, reason: 'by an operator', by: 'ana', bannedAt: new Date().toISOString() })));
  }, 60_000);

  it.each(['gateway', 'ingress'] as const)('a %s credential cannot shorten the lifetime of bans, keys or the audit trail: every record survives', async (role) => {
    const nc = await nats.connect(role);
    const admin = await jetstreamManager(operator);
    for (const stream of [`KV_${BUCKET_BANS}`, `KV_${BUCKET_KEYS}`, AUDIT_STREAM_NAME]) {
      const config = (await admin.streams.info(stream)).config;
      const attack = updateRequest(nc, stream, { ...config, max_age: nanos(1000), duplicate_window: nanos(1000) });
      expect(await refusedSubject(attack)).toBe(`$JS.API.STREAM.UPDATE.${stream}`);
      expect((await admin.streams.info(stream)).config.max_age).toBe(config.max_age);
    }
    const kv = await new Kvm(operator).open(BUCKET_KEYS);
    expect((await kv.get(key.clientId))?.operation).toBe('PUT');
    expect((await (await new Kvm(operator).open(BUCKET_BANS)).get(UUID))?.operation).toBe('PUT');
  });

  it('a gateway credential cannot seal the event log: the ingress goes on storing', async () => {
    const config = (await (await jetstreamManager(operator)).streams.info(STREAM_NAME)).config;
    expect(await refusedSubject(updateRequest(await nats.connect('gateway'), STREAM_NAME, { ...config, sealed: true }))).toBe(`$JS.API.STREAM.UPDATE.${STREAM_NAME}`);
    const ack = await jetstream(await nats.connect('ingress')).publish(channelSubject('sealed.example.net'), JSON.stringify({ type: 'keepalive' }));
    expect(ack.seq).toBeGreaterThan(0);
  });

  it('an ingress credential cannot cut the event log to one message', async () => {
    const js = jetstream(await nats.connect('ingress'));
    for (let i = 0; i < 4; i++) await js.publish(channelSubject('cut.example.net'), JSON.stringify({ type: 'keepalive' }));
    const config = (await (await jetstreamManager(operator)).streams.info(STREAM_NAME)).config;
    expect(await refusedSubject(updateRequest(await nats.connect('ingress'), STREAM_NAME, { ...config, max_msgs: 1 }))).toBe(`$JS.API.STREAM.UPDATE.${STREAM_NAME}`);
    const left = await (await jetstreamManager(operator)).streams.info(STREAM_NAME, { subjects_filter: channelSubject('cut.example.net') });
    expect(left.state.subjects?.[channelSubject('cut.example.net')]).toBe(4);
  });

  it.each(['gateway', 'ingress'] as const)('a %s credential can neither lift an operator’s ban nor delete or rewrite a key', async (role) => {
    const nc = await nats.connect(role);
    const bans = await new Kvm(nc).open(BUCKET_BANS);
    const keys = await new Kvm(nc).open(BUCKET_KEYS);
    expect(await refusedSubject(bans.delete(UUID))).toBe(`$KV.${BUCKET_BANS}.${UUID}`);
    expect(await refusedSubject(keys.delete(key.clientId))).toBe(`$KV.${BUCKET_KEYS}.${key.clientId}`);
    expect(await refusedSubject(keys.put(key.clientId, '{}'))).toBe(`$KV.${BUCKET_KEYS}.${key.clientId}`);
    const other = role === 'gateway' ? 'ingress' : 'gateway';
    // Nor the bans the other role issued, nor its heartbeats.
    expect(await refusedSubject(bans.delete(`auto.${other}.${UUID}`))).toBe(`$KV.${BUCKET_BANS}.auto.${other}.${UUID}`);
    const nodes = await new Kvm(nc).open('relay-nodes');
    expect(await refusedSubject(nodes.put(heartbeatKey(other, 'n1'), '{}'))).toBe(`$KV.relay-nodes.${heartbeatKey(other, 'n1')}`);
  });

  it.each(ROLES)('a %s credential cannot delete, purge or remove a message from any stream', async (role) => {
    const jsm = await jetstreamManager(await nats.connect(role));
    for (const stream of ALL_STREAMS) {
      expect(await refusedSubject(jsm.streams.purge(stream))).toBe(`$JS.API.STREAM.PURGE.${stream}`);
      expect(await refusedSubject(jsm.streams.deleteMessage(stream, 1))).toBe(`$JS.API.STREAM.MSG.DELETE.${stream}`);
      expect(await refusedSubject(jsm.streams.delete(stream))).toBe(`$JS.API.STREAM.DELETE.${stream}`);
    }
  });
});
