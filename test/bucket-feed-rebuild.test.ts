// Upgrading a mesh whose buckets were made before change feeds: nats-server 2.9 cannot add a
// RePublish to a stream, so a plain `relay setup` says what to do and fails, the services refuse to
// start with the same sentence, and `relay setup --rebuild-feeds` makes each bucket's stream again
// with its feed, keeping every key, value and delete, and removes its copy aside.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { kvStream } from '../services/core/kv-internals.js';
import { BUCKET_BANS, BUCKET_KEYS, kvFeedSubject } from '../services/core/subjects.js';
import { startRelayServer } from '../services/server.js';
import { runCli } from './helpers/cli.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

let nats: TestNats;
let nc: NatsConnection;
let jsm: JetStreamManager;

beforeEach(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
});

afterEach(async () => {
  await nc.close();
  await nats.stop();
});

/** Buckets as a release before feeds made them (the KV client's own shape), holding entries. */
async function oldBuckets(): Promise<void> {
  const keys = await new Kvm(nc).create(BUCKET_KEYS, { history: 5 });
  await keys.put('kept', JSON.stringify({ v: 1 }));
  await keys.put('kept', JSON.stringify({ v: 2 }));
  await keys.put('gone', JSON.stringify({ v: 1 }));
  await keys.delete('gone');
  const bans = await new Kvm(nc).create(BUCKET_BANS, { history: 5 });
  await bans.put('banned', JSON.stringify({ reason: 'spam' }));
}

async function streamNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const name of jsm.streams.names()) names.push(name);
  return names.sort();
}

describe('buckets made before change feeds', () => {
  it('a plain relay setup fails with what to do, and a service refuses to start with the same sentence', async () => {
    await oldBuckets();
    const r = await runCli(['setup'], { NATS_URL: nats.url });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain(`has no change feed (${kvFeedSubject(BUCKET_KEYS, '>')})`);
    expect(r.stdout + r.stderr).toContain('relay setup --rebuild-feeds');
    const start = startRelayServer({ service: 'gateway', env: { NATS_URL: nats.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', PROFILE_API_URL: 'offline' } });
    await expect(start).rejects.toThrow(/has no change feed .*relay setup --rebuild-feeds/);
  }, 60_000);

  it('relay setup --rebuild-feeds keeps every entry, gives each bucket its feed and leaves no copy behind; run again, it does nothing', async () => {
    await oldBuckets();
    const r = await runCli(['setup', '--rebuild-feeds'], { NATS_URL: nats.url });
    expect(r.code, r.stderr).toBe(0);
    const keys = await new Kvm(nc).open(BUCKET_KEYS);
    expect((await keys.get('kept'))?.json()).toEqual({ v: 2 });
    expect((await keys.get('gone'))?.operation).toBe('DEL');
    expect((await (await new Kvm(nc).open(BUCKET_BANS)).get('banned'))?.json()).toEqual({ reason: 'spam' });
    const info = await jsm.streams.info(kvStream(BUCKET_KEYS));
    expect(info.config.republish).toMatchObject({ dest: kvFeedSubject(BUCKET_KEYS, '>') });
    expect(info.config.sources ?? []).toEqual([]);
    expect((await streamNames()).filter((n) => n.endsWith('_REBUILD'))).toEqual([]);
    // The feed carries a write made after the rebuild.
    const heard = new Promise<string>((resolve) => nc.subscribe(kvFeedSubject(BUCKET_KEYS, '>'), { max: 1, callback: (_e, m) => resolve(m.subject) }));
    await nc.flush();
    await keys.put('after', '{}');
    expect(await heard).toBe(kvFeedSubject(BUCKET_KEYS, 'after'));
    const again = await runCli(['setup', '--rebuild-feeds'], { NATS_URL: nats.url });
    expect([again.code, again.stdout]).toEqual([0, expect.stringMatching(/Nothing to change/)]);
  }, 90_000);
});
