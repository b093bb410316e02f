// One gateway's memory per stream, field by field: the relay as in `scale` (one gateway), N streams
// of the scale spread opened with Last-Event-ID, then process.memoryUsage() after a forced GC, right
// after the opens and again after WAIT ms with nothing posted (V8's memory reducer compacts what the
// opens' garbage left once allocation is low). For finding where a change's memory went: `brkHeap`
// is the resident part of glibc malloc's main arena ([heap] in /proc/PID/smaps), the native memory
// outside V8's heap (a native object held per stream shows there, not in heapUsed).
//
//   npx tsx bench/tools/gateway-memory.ts [--streams 17000] [--wait-ms 30000] [--no-resume]
//   BENCH_GATEWAY_FLAGS="--heapsnapshot-signal=SIGUSR1" ... then `kill -USR1` the gateway for a snapshot

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LoadGen } from '../lib/loadgen-client.js';
import { channelPlan } from '../scenarios/scale-plan.js';
import { gatewayMemory, startRelay } from '../systems/relay.js';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '17000' },
    'wait-ms': { type: 'string', default: '30000' },
    'no-resume': { type: 'boolean', default: false },
  },
});
const streams = Number(values.streams);
const waitMs = Number(values['wait-ms']);

type Memory = Record<string, number>;

/** Resident bytes of the process's [heap] mapping (glibc malloc's main arena). */
function brkHeap(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const at = smaps.search(/ \[heap\]\n/);
  const rss = at < 0 ? null : /\nRss:\s+(\d+) kB/.exec(smaps.slice(at));
  return rss === null ? 0 : Number(rss[1]) * 1024;
}

async function memory(pid: number): Promise<Memory> {
  const m = await gatewayMemory(pid, 0);
  return { ...m.usage, rssNow: m.rss, brkHeap: brkHeap(pid) };
}

const relay = await startRelay({ gateways: 1 });
const loadgen = new LoadGen();
try {
  const pid = relay.gatewayPids[0]!;
  const base = await memory(pid);
  const t0 = performance.now();
  const spec = { ...relay.streamSpecOn(0, streams, [], 200), plan: channelPlan(streams), offset: 0, ...(values['no-resume'] ? {} : { resume: { lastEventId: 0 } }) };
  const opened = await loadgen.send<{ opened: number; failed: number }>({ cmd: 'open', spec });
  const ms = performance.now() - t0;
  const after = await memory(pid);
  await new Promise((r) => setTimeout(r, waitMs));
  const atRest = await memory(pid);
  const kib = (m: Memory, k: string): string => ((m[k]! - base[k]!) / streams / 1024).toFixed(2);
  console.log(`${opened.opened} opened (${opened.failed} failed) in ${(ms / 1000).toFixed(1)} s: ${((opened.opened / ms) * 1000).toFixed(0)}/s`);
  console.log(`KiB per stream       after the opens   ${waitMs / 1000} s later`);
  for (const k of Object.keys(after)) console.log(`${k.padEnd(20)} ${kib(after, k).padStart(16)} ${kib(atRest, k).padStart(12)}`);
} finally {
  await loadgen.close();
  await relay.stop();
}
