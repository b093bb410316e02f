// The baseline peer as a system under test.
import { fileURLToPath } from 'node:url';
import { httpOk, waitUntil } from '../../tools/poll.js';
import { freePort } from '../../tools/ports.js';
import { BENCH_START, startProc, type Proc } from '../lib/procs.js';
import { GC_ON_SIGNAL, memoryFileFor, NODE_ENV_FOR_SYSTEMS, PAYLOAD_BODY, type System } from './system.js';

export async function startBaseline(): Promise<System> {
  const port = await freePort();
  const proc: Proc = startProc('baseline', process.execPath, ['--import', 'tsx', ...GC_ON_SIGNAL, fileURLToPath(new URL('../peers/baseline-server.ts', import.meta.url))], {
    ...NODE_ENV_FOR_SYSTEMS,
    BENCH_MEMORY_FILE: memoryFileFor('baseline'),
    PORT: String(port),
  });
  await waitUntil(() => httpOk(`http://127.0.0.1:${port}/x`, { method: 'POST', body: '{}' }), 'the baseline server', BENCH_START);
  const endpoint = { host: '127.0.0.1', port };
  return {
    name: 'baseline',
    pids: () => [proc.pid],
    streamPid: () => proc.pid,
    memoryFile: memoryFileFor('baseline'),
    streamSpec: (count, channels, concurrency) => ({
      endpoint,
      count,
      channels,
      concurrency,
      template: 'GET /?host={channel} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n',
      readyMarker: ': ok',
    }),
    publishSpec: (channels, perSecond, connections) => ({
      endpoint,
      path: '/publish?host={channel}',
      headers: {},
      body: PAYLOAD_BODY,
      channels,
      perSecond,
      connections,
    }),
    stop: () => proc.stop(),
  };
}
