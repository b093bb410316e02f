// npm run chaos:nats [-- --nats-server PATH --faults 8 --fault pause|blackhole|kill]: JetStream alone,
// without the relay, the way the relay uses it: an R3 stream, publishers awaiting each
// acknowledgement and resending under the same Nats-Msg-Id when none comes, while the stream's
// leader is paused, cut off (its routes blackholed, then healed) or killed, one fault at a time.
// Then every replica is read on its own and compared: the lowest level at which the campaign's
// replica-divergence, lost and duplicated anomalies show (docs/RELIABILITY.md). Run it against any
// nats-server before adopting it. Exits 1 when a replica disagrees, a write is stored twice, or an
// acknowledged write is missing.

import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { Command, InvalidArgumentError } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChaosNats } from './nats-nodes.js';

const opts = new Command('chaos:nats')
  .option('--nats-server <path>', 'the nats-server binary (default: the one installed)')
  .option('--faults <n>', 'how many faults, one after another', (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number');
    return n;
  }, 8)
  .option('--fault <kind>', 'pause | blackhole | kill, of the stream leader', 'pause')
  .parse()
  .opts<{ natsServer?: string; faults: number; fault: string }>();

const say = (line: string): void => void process.stdout.write(`[chaos:nats] ${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'chaos-nats-'));
const nats = await ChaosNats.start(join(dir, 'nats'), dir, opts.natsServer);
let failed = false;
try {
  const nc = await connect({ servers: nats.directUrls.split(','), maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  const jsm = await jetstreamManager(nc);
  for (let i = 0; ; i++) {
    try {
      await jsm.streams.add({ name: 'T', subjects: ['t.>'], num_replicas: 3, duplicate_window: 120e9, allow_direct: true });
      break;
    } catch (e) {
      if (i > 40) throw e;
      await sleep(500);
    }
  }
  const js = jetstream(nc, { timeout: 3000 });
  const acked = new Set<string>();
  let stop = false;
  // Eight publishers, each awaiting its acknowledgement and resending the same id until it has one.
  const publishers = Array.from({ length: 8 }, async (_, w) => {
    for (let n = 0; !stop; n++) {
      const id = `${w}-${n}`;
      const h = headers();
      h.set('Nats-Msg-Id', id);
      while (!stop) {
        try {
          await js.publish(`t.${w}`, id, { headers: h });
          acked.add(id);
          break;
        } catch {
          await sleep(100);
        }
      }
      await sleep(20);
    }
  });
  for (let k = 0; k < opts.faults; k++) {
    await sleep(4000);
    const leader = await nats.streamLeader('T');
    if (leader === null) continue;
    say(`${opts.fault} the stream leader n${leader + 1} for 6 s`);
    if (opts.fault === 'kill') await nats.kill(leader);
    else if (opts.fault === 'blackhole') nats.isolate(leader, { kind: 'blackhole' });
    else nats.pause(leader);
    await sleep(6000);
    if (opts.fault === 'kill') await nats.restart(leader);
    else if (opts.fault === 'blackhole') nats.isolate(leader, { kind: 'pass' });
    else nats.resume(leader);
  }
  stop = true;
  await Promise.all(publishers);
  await sleep(8000);
  const last = (await jsm.streams.info('T')).state.last_seq;
  // What a client reads (a consumer, served by the leader): every acknowledged write once?
  const heard = new Map<string, number>();
  if (last > 0) {
    const messages = await (await js.consumers.get('T', { deliver_policy: DeliverPolicy.All })).consume();
    for await (const m of messages) {
      heard.set(m.string(), (heard.get(m.string()) ?? 0) + 1);
      if (m.info.pending === 0) break;
    }
  }
  const heardTwice = [...heard.values()].filter((n) => n > 1).length;
  const heardMissing = [...acked].filter((id) => !heard.has(id)).length;
  say(`a consumer reads ${[...heard.values()].reduce((a, b) => a + b, 0)} entries: ${heardTwice} writes stored twice, ${heardMissing} acknowledged writes missing`);
  if (heardTwice + heardMissing > 0) failed = true;
  await nc.close();
  // Each replica on its own, one direct get at a time (a replica behind withdraws from direct gets,
  // which then go to another: reading it alone shows what it holds, not what another one does).
  const replicas: string[][] = [];
  for (const s of nats.slots) {
    const own = await connect({ servers: [`nats://127.0.0.1:${s.clientPort}`] });
    const m = await jetstreamManager(own, { timeout: 20_000 });
    const seen: string[] = new Array<string>(last).fill('-');
    for (let seq = 1; seq <= last; seq++) {
      const got = await m.direct.getMessage('T', { seq }).catch(() => null);
      if (got !== null) seen[seq - 1] = got.string();
    }
    replicas.push(seen);
    await own.close();
  }
  say(`${acked.size} writes acknowledged; the leader's log has ${last} entries`);
  for (const [i, seen] of replicas.entries()) {
    const differing = seen.filter((v, q) => replicas.some((other) => other[q] !== v)).length;
    const held = new Set(seen);
    const duplicated = seen.filter((v) => v !== '-').length - new Set(seen.filter((v) => v !== '-')).size;
    const missing = [...acked].filter((id) => !held.has(id)).length;
    say(`n${i + 1}: ${differing} sequences differ from another replica, ${duplicated} writes stored twice, ${missing} acknowledged writes missing`);
    if (differing + duplicated + missing > 0) failed = true;
  }
  say(failed ? 'the replicas do not hold the acknowledged writes once each' : 'every replica holds every acknowledged write once');
} finally {
  await nats.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
