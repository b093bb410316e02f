// What the regions' design (docs/REGIONS.md) asks of NATS, checked on the nats-server the relay
// runs on: three regions, one server each, joined by gateways through loopback proxies. Each
// region keeps its own log, placed in its own cluster; every other region holds a mirror of it.
// These are the properties the design is built on; if a nats-server release changes one, this
// file says which before the relay's region tests do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamManager, type StoredMsg, type StreamConfig } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSuperCluster, type SuperCluster } from '../../tools/nats-super-cluster.js';
import { pollUntil, waitUntil } from '../../tools/poll.js';

const REGIONS = ['a', 'b', 'c'] as const;
type RegionName = (typeof REGIONS)[number];

let dir: string;
let sc: SuperCluster;
const conns = new Map<RegionName, NatsConnection>();

const nc = (r: RegionName): NatsConnection => conns.get(r)!;
// No account-info check: a region cut off cannot answer it (it is the meta group's).
const jsm = (r: RegionName): Promise<JetStreamManager> => jetstreamManager(nc(r), { checkAPI: false });
const logOf = (r: RegionName): string => `LOG_${r.toUpperCase()}`;
const copyOf = (origin: RegionName, at: RegionName): string => `LOG_${origin.toUpperCase()}_AT_${at.toUpperCase()}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-regions-'));
  sc = await startSuperCluster(dir, REGIONS);
  for (const r of REGIONS) conns.set(r, await connect({ servers: sc.region(r).url, name: `test-${r}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 }));
  // The layout of docs/REGIONS.md: each region's log in its cluster with its own subjects, republished
  // for live delivery, and a mirror of it in every other region, all readable by direct get.
  for (const r of REGIONS) {
    await created(r, {
      name: logOf(r),
      subjects: [`region.${r}.channel.>`],
      placement: { cluster: r, tags: [] },
      allow_direct: true,
      republish: { src: '>', dest: 'live.>' },
    });
  }
  for (const origin of REGIONS) {
    for (const at of REGIONS) {
      if (at !== origin) await created(at, { name: copyOf(origin, at), mirror: { name: logOf(origin) }, placement: { cluster: at, tags: [] }, allow_direct: true, mirror_direct: true });
    }
  }
}, 180_000);

/**
 * Creates a stream, trying again while JetStream says it is not ready: a meta group that has just
 * elected its leader may still refuse for a moment (creating the same stream twice is harmless).
 */
async function created(r: RegionName, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  let last: unknown;
  const done = await pollUntil(
    async () =>
      (await jsm(r)).streams.add(config).then(
        () => true,
        (err: unknown) => void (last = err),
      ),
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  if (done === undefined) throw new Error(`could not create ${config.name} in region ${r}: ${String(last)}`);
}

afterAll(async () => {
  for (const c of conns.values()) await c.close().catch(() => undefined);
  await sc?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Publishes `count` payloads to region `r`'s log from a client of region `r`; the sequences acknowledged. */
async function publish(r: RegionName, channel: string, count: number, tag: string): Promise<number[]> {
  const js = jetstream(nc(r));
  const seqs: number[] = [];
  for (let i = 0; i < count; i++) {
    const h = headers();
    h.set('X-Tag', `${tag}-${i}`);
    seqs.push((await js.publish(`region.${r}.channel.${channel}`, `${tag}-${i}`, { headers: h, timeout: 5000 })).seq);
  }
  return seqs;
}

/** A stream's last sequence; -1 while JetStream cannot say (its meta group re-forming after a fault). */
async function lastSeq(r: RegionName, stream: string): Promise<number> {
  try {
    return (await (await jsm(r)).streams.info(stream)).state.last_seq;
  } catch {
    return -1;
  }
}

/** Whether a stream holds a sequence, asked by direct get (answered without the meta group). */
async function holds(r: RegionName, stream: string, seq: number): Promise<boolean> {
  return (await (await jsm(r)).direct.getMessage(stream, { seq })) !== null;
}

/** Every message of a stream from `from` to `to`, read one by one by direct get (no consumer). */
async function readDirect(r: RegionName, stream: string, from: number, to: number): Promise<StoredMsg[]> {
  const m = await jsm(r);
  const out: StoredMsg[] = [];
  for (let seq = from; seq <= to; seq++) {
    const msg = await m.direct.getMessage(stream, { seq });
    if (msg !== null) out.push(msg);
  }
  return out;
}

describe('regions on nats-server: what the design relies on', () => {
  it('a region cut off from every other keeps acknowledging its own payloads, and its readers read them', async () => {
    sc.isolate('a');
    try {
      // Each acknowledged within the publish's 5 s: nothing waited for a region it cannot reach.
      const seqs = await publish('a', 'cutoff', 20, 'alone');
      expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));
      const read = await readDirect('a', logOf('a'), seqs[0]!, seqs.at(-1)!);
      expect(read.map((m) => m.header.get('X-Tag'))).toEqual(seqs.map((_, i) => `alone-${i}`));
      // The cut held: no other region's copy has them.
      expect(await holds('b', copyOf('a', 'b'), seqs[0]!)).toBe(false);
      expect(await holds('c', copyOf('a', 'c'), seqs[0]!)).toBe(false);
    } finally {
      sc.heal();
    }
    await sc.connected();
  });

  it('a copy of a region’s log elsewhere keeps the origin’s sequences and, after a cut, catches up with nothing missing or repeated', async () => {
    const before = await publish('a', 'copies', 5, 'before');
    await waitUntil(async () => (await lastSeq('b', copyOf('a', 'b'))) >= before.at(-1)!, "b's copy of a's log to hold what a stored before the cut", { timeoutMs: 30_000 });
    sc.setLink('a', 'b', { kind: 'cut' });
    sc.setLink('a', 'c', { kind: 'cut' });
    let during: number[];
    try {
      during = await publish('a', 'copies', 30, 'during');
      // While cut, b cannot have them: the cut holds (no way around the proxies).
      expect(await holds('b', copyOf('a', 'b'), during[0]!)).toBe(false);
      // b still reads what it had, from its own copy, by direct get.
      const old = await readDirect('b', copyOf('a', 'b'), before[0]!, before.at(-1)!);
      expect(old.map((m) => m.header.get('X-Tag'))).toEqual(before.map((_, i) => `before-${i}`));
    } finally {
      sc.heal();
    }
    const last = during.at(-1)!;
    for (const at of ['b', 'c'] as const) {
      await waitUntil(async () => (await lastSeq(at, copyOf('a', at))) >= last, `${at}'s copy of a's log to catch up after the cut`, { timeoutMs: 30_000 });
      const copied = await readDirect(at, copyOf('a', at), before[0]!, last);
      // The same sequence as at the origin for each payload, each once, in the origin's order.
      expect(copied.map((m) => m.seq)).toEqual([...before, ...during]);
      expect(copied.map((m) => m.header.get('X-Tag'))).toEqual([...before.map((_, i) => `before-${i}`), ...during.map((_, i) => `during-${i}`)]);
    }
  });

  it("a payload stored in one region reaches a live listener in every other region, with the origin's sequence and the previous one on its subject", async () => {
    const heard = new Map<RegionName, Array<{ seq: number; previous: number; stream: string }>>();
    const subs = (['b', 'c'] as const).map((r) => {
      heard.set(r, []);
      return nc(r).subscribe('live.region.*.channel.live-test', {
        callback: (_err, msg) => {
          heard.get(r)!.push({ seq: Number(msg.headers?.get('Nats-Sequence')), previous: Number(msg.headers?.get('Nats-Last-Sequence')), stream: msg.headers?.get('Nats-Stream') ?? '' });
        },
      });
    });
    // Interest crosses the gateways before the first publish, or a listener misses it (not a loss the design accepts: it is gap-filled).
    await Promise.all((['b', 'c'] as const).map((r) => nc(r).flush()));
    // Any probe heard in both will do: the newest one may still be crossing the proxies.
    const probes: number[] = [];
    await waitUntil(async () => {
      probes.push(...(await publish('a', 'live-test', 1, 'probe')));
      return (['b', 'c'] as const).every((r) => heard.get(r)!.some((h) => probes.includes(h.seq)));
    }, 'interest in the live subject to reach region a', { timeoutMs: 30_000, intervalMs: 200 });
    const seqs = await publish('a', 'live-test', 10, 'live');
    await waitUntil(() => (['b', 'c'] as const).every((r) => heard.get(r)!.filter((h) => seqs.includes(h.seq)).length === 10), 'every live payload in regions b and c', { timeoutMs: 30_000 });
    for (const r of ['b', 'c'] as const) {
      const got = heard.get(r)!.filter((h) => seqs.includes(h.seq));
      expect(got.map((h) => h.seq)).toEqual(seqs);
      expect(got.every((h) => h.stream === logOf('a'))).toBe(true);
      // Each names the one before it on its subject: a listener that missed one knows it did.
      expect(got.slice(1).map((h) => h.previous)).toEqual(seqs.slice(0, -1));
    }
    for (const s of subs) s.unsubscribe();
  });

  it('a region cut off cannot create a stream or a consumer (no meta majority; refused or unanswered): its readers must use direct gets', async () => {
    const probe = { name: 'replay-probe', filter_subject: 'region.c.channel.>' };
    sc.isolate('c');
    try {
      const m = await jetstreamManager(nc('c'), { timeout: 3000, checkAPI: false });
      await expect(m.consumers.add(logOf('c'), probe)).rejects.toThrow();
      await expect(m.streams.add({ name: 'CUT_OFF_PROBE', subjects: ['cut-off-probe'], placement: { cluster: 'c', tags: [] } })).rejects.toThrow();
      const seqs = await publish('c', 'direct', 3, 'direct');
      const read = await readDirect('c', logOf('c'), seqs[0]!, seqs.at(-1)!);
      expect(read).toHaveLength(3);
    } finally {
      sc.heal();
    }
    await sc.connected();
    // The same request succeeds once the link is back: it was the cut that refused it.
    await waitUntil(async () => (await jsm('c')).consumers.add(logOf('c'), probe).then(() => true, () => false), 'the consumer to be created after the heal', { timeoutMs: 30_000, intervalMs: 500 });
  });

  it('a region killed whole comes back by itself: the others keep storing and creating meanwhile, and its copies catch up', { timeout: 240_000 }, async () => {
    await sc.kill('c');
    const whileDown = await publish('a', 'kill', 10, 'down');
    const inB = await publish('b', 'kill', 3, 'down-b');
    // Two regions of three are the meta group's majority: creating still works (after a re-election if c led it).
    await waitUntil(async () => (await jsm('a')).streams.add({ name: 'WHILE_C_DOWN', subjects: ['while-c-down'], placement: { cluster: 'a', tags: [] } }).then(() => true, () => false), 'a stream created in a while c is down', { timeoutMs: 30_000, intervalMs: 500 });
    await sc.restart('c');
    await sc.connected();
    await waitUntil(async () => (await lastSeq('c', copyOf('a', 'c'))) >= whileDown.at(-1)! && (await lastSeq('c', copyOf('b', 'c'))) >= inB.at(-1)!, "c's copies to catch up after it came back", { timeoutMs: 60_000 });
    const copied = await readDirect('c', copyOf('a', 'c'), whileDown[0]!, whileDown.at(-1)!);
    expect(copied.map((m) => m.seq)).toEqual(whileDown);
  });
});
