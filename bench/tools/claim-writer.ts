// The rest of a simulated million-stream mesh, for `scale`: claims written and renewed in KV
// relay-streams the way N other gateways would (every claim rewritten once per CLAIM_TTL/2, spread
// over the period), under accounts the real gateways never hold. A gateway of the relay should not
// hear any of it: compare relay_claim_messages_received_total and its RSS with and without this.
//
//   npx tsx bench/tools/claim-writer.ts --claims 900000 --gateways 60 --claim-ttl 1h [--nats nats://...]
// Prints one line per 10 s: claims written, renewals/s. Stops on SIGINT/SIGTERM (deletes nothing:
// the bucket's max age drops the claims).

import { parseArgs } from 'node:util';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { parseDuration } from '../../services/core/units.js';
import { BUCKET_STREAMS } from '../../services/core/subjects.js';
import { claimKey } from '../../services/gateway/ownership/ownership.js';

const { values } = parseArgs({
  options: {
    claims: { type: 'string', default: '900000' },
    gateways: { type: 'string', default: '60' },
    'claim-ttl': { type: 'string', default: '1h' },
    nats: { type: 'string', default: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' },
    'in-flight': { type: 'string', default: '256' },
  },
});
const claims = Number(values.claims);
const gateways = Number(values.gateways);
const periodMs = (parseDuration(values['claim-ttl']) ?? 3_600_000) / 2;
const inFlight = Number(values['in-flight']);

const nc = await connect({ servers: values.nats.split(','), name: 'bench-claim-writer' });
const kv = await new Kvm(nc).open(BUCKET_STREAMS);
const openedAt = new Date().toISOString();

function record(i: number): string {
  const node = `sim-gateway-${i % gateways}`;
  return JSON.stringify({ node, conn: `sim-conn-${i}`, uuid: `sim-${i}`, channel: `sim-${i % 5000}.example.net`, clientId: 'relay_sim', openedAt });
}
const key = (i: number): string => claimKey(`sim-${i}`, `sim-${i % 5000}.example.net`);

async function writeAll(from: number, to: number): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      await kv.put(key(i), record(i)).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

let stopping = false;
for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => (stopping = true));

const t0 = performance.now();
await writeAll(0, claims);
console.log(`claim-writer: ${claims} claims written in ${((performance.now() - t0) / 1000).toFixed(1)} s (${gateways} simulated gateways)`);
// Renewals: every claim once per period, a tick a second, as each simulated gateway spreads its own.
const perTick = Math.max(1, Math.round(claims / (periodMs / 1000)));
let cursor = 0;
let renewed = 0;
let lastReport = performance.now();
while (!stopping) {
  const tick = performance.now();
  const from = cursor;
  cursor = (cursor + perTick) % claims;
  await writeAll(from, Math.min(claims, from + perTick));
  renewed += perTick;
  if (performance.now() - lastReport >= 10_000) {
    console.log(`claim-writer: ${(renewed / ((performance.now() - lastReport) / 1000)).toFixed(0)} renewals/s`);
    renewed = 0;
    lastReport = performance.now();
  }
  await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - tick))));
}
await nc.close();
