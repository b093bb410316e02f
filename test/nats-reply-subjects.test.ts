// NATS does not check a message's reply subject against the sender's permissions, and JetStream
// answers (a publish's ack, an API response, a direct get's stored message) with its own account's
// rights. Against infra/nats/permissions.conf, each internet-facing role sends everything it may
// publish, each time with the reply aimed at something it must not touch: every stream's purge,
// delete, update and message delete, a consumer's creation, an operator's key, ban and audit
// record, another role's keys, the operator's inbox. Whatever the answers say, nothing of the
// relay's changes but what the role may write itself. (With the roles in JetStream's own account,
// as before, the same sends purged the audit trail, deleted streams and forged keys.)

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { natsLayout } from '../services/core/nats-layout.js';
import { loadConfig } from '../services/core/config.js';
import { banKey } from '../services/core/bans.js';
import { heartbeatKey } from '../services/core/node-heartbeat.js';
import { kvStream, kvSubject } from '../services/core/kv-internals.js';
import { BUCKET_BANS, BUCKET_IDEMPOTENCY, BUCKET_KEYS, BUCKET_NODES, BUCKET_STREAMS, CLAIM_INDEX_PREFIX, idempotencyBucket, kvFeedSubject } from '../services/core/subjects.js';
import { KvMirror } from '../services/core/kv-mirror.js';
import { createLogger } from '../services/core/logger.js';
import { allProbes, permitted } from './helpers/nats-probes.js';
import { startRoleNats, type RoleNats } from './helpers/role-nats.js';
import { runCliJson } from './helpers/cli.js';
import type { CreatedKey } from '../services/core/keys.js';

const UUID = '00000000-0000-4000-8000-000000000001';
const STREAMS = natsLayout(loadConfig('all', {})).map((p) => p.stream);

/** Where an attacker would like JetStream's answers to land. */
function targets(role: string): string[] {
  const other = role === 'ingress' ? 'gateway' : 'ingress';
  return [
    ...STREAMS.flatMap((s) => ['STREAM.PURGE', 'STREAM.DELETE', 'STREAM.UPDATE', 'STREAM.MSG.DELETE', 'CONSUMER.CREATE', 'CONSUMER.DURABLE.CREATE'].map((verb) => `$JS.API.${verb}.${s}${verb.endsWith('DURABLE.CREATE') ? '.stolen' : ''}`)),
    kvSubject(BUCKET_KEYS, 'forged'),
    kvSubject(BUCKET_BANS, UUID),
    kvSubject(BUCKET_BANS, banKey(UUID, other)),
    kvSubject(BUCKET_NODES, heartbeatKey(other, 'forged')),
    'audit.forged',
    '_INBOX.cli.stolen',
  ];
}

interface StreamState {
  config: unknown;
  consumers: number;
  subjects: Record<string, number>;
}

async function snapshot(jsm: JetStreamManager): Promise<Record<string, StreamState | 'deleted'>> {
  const out: Record<string, StreamState | 'deleted'> = {};
  for (const s of STREAMS) {
    const info = await jsm.streams.info(s, { subjects_filter: '>' }).catch((e: unknown) => {
      if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound) return null;
      throw e;
    });
    if (info === null) {
      out[s] = 'deleted';
      continue;
    }
    out[s] = { config: info.config, consumers: info.state.consumer_count, subjects: info.state.subjects ?? {} };
  }
  return out;
}

/** The state without the subjects the role may write itself (each stream's counts there may grow). */
function withoutOwn(state: Record<string, StreamState | 'deleted'>, own: ReadonlySet<string>): Record<string, StreamState | 'deleted'> {
  return Object.fromEntries(Object.entries(state).map(([s, v]) => [s, v === 'deleted' ? v : { ...v, subjects: Object.fromEntries(Object.entries(v.subjects).filter(([subject]) => !own.has(subject))) }]));
}

let nats: RoleNats;
let operator: NatsConnection;

beforeAll(async () => {
  nats = await startRoleNats();
  operator = await nats.connect('cli');
  // Something to lose in every bucket and trail: a key (and its audit record), an operator's ban.
  await runCliJson<CreatedKey>(['keys', 'create', '--scopes', 'irc.connection.establish', '--json'], nats.env('cli'));
  await (await new Kvm(operator).open(BUCKET_BANS)).put(UUID, JSON.stringify({ uuid: UUID, reason: 'by an operator', by: 'ana', bannedAt: new Date().toISOString() }));
  // And in every other stream, a record no probe writes, so a purge or a deleted message shows.
  const ingress = await nats.connect('ingress');
  const gateway = await nats.connect('gateway');
  for (const [nc, subject] of [
    [ingress, 'channel.seed'],
    [ingress, kvSubject(BUCKET_IDEMPOTENCY, 'seed')],
    [ingress, kvSubject(BUCKET_NODES, heartbeatKey('ingress', 'seed'))],
    [gateway, kvSubject(BUCKET_STREAMS, 'seed')],
    [gateway, `${CLAIM_INDEX_PREFIX}seed`],
  ] as const) {
    await nc.request(subject, '{}');
  }
  const jsm = await jetstreamManager(operator);
  for (const s of STREAMS) expect((await jsm.streams.info(s)).state.messages, s).toBeGreaterThan(0);
}, 60_000);

afterAll(async () => {
  await nats?.stop();
});

describe("a role's answers cannot be aimed at what it may not touch", () => {
  it.each(['ingress', 'gateway'] as const)('%s: everything it may publish, with every answer aimed at every purge, delete, update, consumer, key, ban and audit subject, changes nothing but its own records', async (role) => {
    const jsm = await jetstreamManager(operator);
    const nc = await nats.connect(role);
    const pubs = [];
    for (const probe of allProbes()) if (probe.kind === 'pub' && (await permitted(nc, probe))) pubs.push(probe);
    // A body of the attacker's own, staged where the role may write, so a direct get answers with it.
    const forged = JSON.stringify({ clientId: 'forged', secretHash: 'x', scopes: ['irc.connection.establish'], config: { name: 'X', subjects: ['x'] }, seq: 1 });
    const staged = kvSubject(BUCKET_BANS, banKey(UUID, role));
    await nc.request(staged, forged);
    const own = new Set([...pubs.map((p) => p.subject).filter((s) => !s.startsWith('$JS.')), staged]);
    const sends = [...pubs.map((p) => ({ subject: p.subject, body: p.body ?? '' })), { subject: `$JS.API.DIRECT.GET.${kvStream(BUCKET_BANS)}.${staged}`, body: '' }];
    const before = withoutOwn(await snapshot(jsm), own);

    for (const target of targets(role)) {
      for (const send of sends) {
        // A KV delete marker too, where the role may write: its ack is aimed like any other.
        const h = headers();
        h.set('Nats-Msg-Id', `${target}:${send.subject}`);
        nc.publish(send.subject, send.body, { reply: target, headers: h });
      }
    }
    await nc.flush();
    // Every send has been handled once a request of each kind behind it has its answer; the answers
    // aimed elsewhere would have been acted on by then (the operator's own request comes after).
    for (const send of sends) await nc.request(send.subject, send.body, { timeout: 5000 }).catch(() => undefined);
    await jsm.getAccountInfo();

    expect(withoutOwn(await snapshot(jsm), own)).toEqual(before);
    const keys = await new Kvm(operator).open(BUCKET_KEYS);
    expect(await keys.get('forged')).toBeNull();
  }, 120_000);
});

describe("answers a role aims at its own account's change feeds", () => {
  it('another ingress host keeps an operator’s ban and accepts no forged key: a stored record with an operator ban’s headers, and direct gets answered onto the keys feed', async () => {
    const victim = await nats.connect('ingress');
    const logger = createLogger({ level: 'silent', pretty: false });
    const identity = (v: unknown): unknown => v;
    const bans = new KvMirror(jetstream(victim), BUCKET_BANS, identity, logger);
    const keys = new KvMirror(jetstream(victim), BUCKET_KEYS, identity, logger);
    await Promise.all([bans.start(), keys.start()]);
    try {
      expect(bans.get(UUID)).toBeDefined();
      const attacker = await nats.connect('ingress');
      // The operator's ban "deleted", in headers stored ahead of the server's on a key the ingress may write.
      // Its sequence is the one the server will give it, so no loss shows and no reading again heals it.
      const next = async (bucket: string): Promise<string> => String((await (await jetstreamManager(attacker)).streams.info(kvStream(bucket))).state.last_seq + 1);
      const forgedHeaders = (bucket: string, key: string, seq: string, extra: Array<[string, string]> = []): ReturnType<typeof headers> => {
        const h = headers();
        for (const [name, value] of [['Nats-Stream', kvStream(bucket)], ['Nats-Subject', kvSubject(bucket, key)], ['Nats-Sequence', seq], ...extra]) h.set(name!, value!);
        return h;
      };
      await jetstream(attacker).publish(kvSubject(BUCKET_BANS, banKey('22222222-2222-4222-8222-222222222222', 'ingress')), '{}', { headers: forgedHeaders(BUCKET_BANS, UUID, await next(BUCKET_BANS), [['KV-Operation', 'DEL']]) });
      // A key record staged where the ingress may write, answered onto the keys feed; and a real key answered onto another key's.
      const idem = kvSubject(idempotencyBucket(null), 'forged');
      await jetstream(attacker).publish(idem, JSON.stringify({ clientId: 'forged', scopes: ['irc.connection.establish'] }), { headers: forgedHeaders(BUCKET_KEYS, 'forged', await next(BUCKET_KEYS)) });
      attacker.publish(`$JS.API.DIRECT.GET.${kvStream(idempotencyBucket(null))}.${idem}`, '', { reply: kvFeedSubject(BUCKET_KEYS, 'forged') });
      const real = [...keys.items()][0]![0];
      attacker.publish(`$JS.API.DIRECT.GET.${kvStream(BUCKET_KEYS)}.${kvSubject(BUCKET_KEYS, real)}`, '', { reply: kvFeedSubject(BUCKET_KEYS, 'other') });
      await attacker.flush();
      // Something genuine after: once the victim hears it, what came before has been heard.
      const heard = new Promise<void>((resolve) => keys.on('put', (key) => key === 'after' && resolve()));
      await (await new Kvm(operator).open(BUCKET_KEYS)).put('after', '{}');
      await heard;
      expect(bans.get(UUID)).toBeDefined();
      expect([keys.get('forged'), keys.get('other')]).toEqual([undefined, undefined]);
    } finally {
      await Promise.all([bans.stop(), keys.stop()]);
    }
  });
});

