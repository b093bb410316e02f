// How long JetStream alone takes from publish to the RePublished copy reaching a subscriber, on a
// fresh nats-server, with no relay process in the path: the floor under the relay's end-to-end
// latency. Publishes at a fixed rate (default 200/s, what fanout at 50,000 deliveries/s over 250
// streams per channel sends), prints p50/p99/max.
// npx tsx bench/tools/jetstream-latency.ts [perSecond] [seconds] [file|memory]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { createInbox, headers } from '@nats-io/nats-core';
import { startNatsNode } from '../../tools/nats-launcher.js';
import { Histogram } from '../lib/histogram.js';
import { PAYLOAD_BODY } from '../systems/system.js';

const perSecond = Number(process.argv[2] ?? 200);
const seconds = Number(process.argv[3] ?? 10);
const storage = process.argv[4] === 'memory' ? StorageType.Memory : StorageType.File;

const dir = mkdtempSync(join(tmpdir(), 'js-latency-'));
const node = await startNatsNode({ storeDir: join(dir, 'nats') });
const nc = await connect({ servers: node.url });
try {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'LAT', subjects: ['lat.>'], storage, republish: { src: 'lat.>', dest: 'live.lat.>' } });
  const sent = new Map<string, number>();
  const hist = new Histogram();
  let received = 0;
  nc.subscribe('live.lat.>', {
    callback: (_err, msg) => {
      const t = sent.get(msg.headers?.get('id') ?? '');
      if (t !== undefined) hist.record(performance.now() - t);
      received++;
    },
  });
  const inbox = createInbox();
  nc.subscribe(`${inbox}.*`, { callback: () => undefined });
  const total = perSecond * seconds;
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const h = headers();
    h.set('id', String(i));
    sent.set(String(i), performance.now());
    nc.publish(`lat.c${i % 4}`, PAYLOAD_BODY, { headers: h, reply: `${inbox}.${i}` });
  }
  await nc.flush();
  await new Promise((r) => setTimeout(r, 500));
  const p = (q: number): string => hist.percentile(q).toFixed(2);
  process.stdout.write(`${storage} storage, ${perSecond}/s for ${seconds} s: received ${received}/${total}, publish to RePublish p50 ${p(50)} ms p99 ${p(99)} ms max ${hist.max.toFixed(2)} ms\n`);
} finally {
  await nc.close();
  await node.stop();
  rmSync(dir, { recursive: true, force: true });
}
