// The operator's read of the log (core/operator-read.ts) against a real nats-server: a bounded read
// whose first message does not come (a pull lost on its way, as a stranger's attack saw across
// regions, or a server that stops answering for a moment) is made again from where it stopped, so a
// replay neither fails nor repeats an entry, and no consumer is left on the server.
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MergedLog } from '../services/core/merged-log.js';
import type { OperatorLog } from '../services/core/operator-logs.js';
import { openOperatorRead } from '../services/core/operator-read.js';
import { DeliverPolicy } from '@nats-io/jetstream';
import { freeze, startTestNats, type TestNats } from './helpers/nats.js';

let nats: TestNats;
let nc: NatsConnection;
let jsm: JetStreamManager;
const STREAMS = ['OPS_A', 'OPS_B'];
const logs: OperatorLog[] = STREAMS.map((stream, i) => ({ region: `r${i}`, stream, subject: (s) => `${stream.toLowerCase()}.${s}` }));

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  for (const stream of STREAMS) {
    await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.channel.>`] });
  }
  // Alternating between the two logs, one after another: the order a merged read must give.
  for (let i = 0; i < 20; i++) await js.publish(`${STREAMS[i % 2]!.toLowerCase()}.channel.x`, JSON.stringify(i));
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

async function consumers(): Promise<number> {
  const counts = await Promise.all(STREAMS.map(async (s) => (await jsm.streams.info(s)).state.consumer_count));
  return counts.reduce((a, b) => a + b, 0);
}

describe("the operator's read of the log", () => {
  it('reads every log whole, oldest first, and leaves no consumer', async () => {
    const read = await openOperatorRead(jetstream(nc), logs, { filter: 'channel.>', startIn: () => ({ deliver_policy: DeliverPolicy.All }), follow: false, batch: 4 });
    const got: number[] = [];
    for await (const from of new MergedLog(read.sources)) got.push(from.message.json<number>());
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => i));
    await read.close();
    expect(await consumers()).toBe(0);
  });

  it('a read whose first messages do not come while the server stops answering is made again, every entry once', async () => {
    const read = await openOperatorRead(jetstream(nc, { timeout: 20_000 }), logs, { filter: 'channel.>', startIn: () => ({ deliver_policy: DeliverPolicy.All }), follow: false, batch: 4 });
    const thaw = await freeze(nats.node!);
    // Longer than a first message may take (2 s), shorter than a JetStream request's patience here.
    const thawed = new Promise<void>((resolve) => setTimeout(() => resolve(thaw()), 4_000));
    const got: number[] = [];
    try {
      for await (const from of new MergedLog(read.sources)) got.push(from.message.json<number>());
    } finally {
      await thawed;
      await read.close();
    }
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await consumers()).toBe(0);
  }, 60_000);
});
