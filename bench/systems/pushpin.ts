// Pushpin as a system under test: the production SSE fan-out proxy an operator would otherwise
// deploy. Installed from Debian when missing, run from a private config (its own rundir, zurl, and
// message_rate=0 so its default 2,500/s cap does not distort the comparison), fed through its HTTP
// publish endpoint with the relay's own frame format.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aptInstall, commandPath } from '../../tools/apt.js';
import { httpOk, httpStatus, waitUntil } from '../../tools/poll.js';
import { freePort } from '../../tools/ports.js';
import { BENCH_START, LOG_DIR, startProc, type Proc } from '../lib/procs.js';
import { PAYLOAD_BODY, type System } from './system.js';

function ensureInstalled(): void {
  const found = (): boolean => ['pushpin', 'zurl', 'condure'].every((c) => commandPath(c) !== null);
  if (found() || (aptInstall('pushpin') && found())) return;
  throw new Error('Pushpin is not installed: run "sudo apt-get install -y pushpin" (it brings condure and zurl).');
}

/** Publish content in the relay's frame format; {channel} and {ts} are filled in per publish. */
function publishBody(): string {
  const meta = JSON.stringify({ uuid: '00000000-0000-0000-0000-000000000001', agent: 'bench/1.0', channel: '{channel}' });
  const content = `event: meta\ndata: ${meta}\n\nid: 1\ndata: ${PAYLOAD_BODY}\n\n`;
  return JSON.stringify({ items: [{ channel: '{channel}', formats: { 'http-stream': { content } } }] });
}

export async function startPushpin(): Promise<System> {
  ensureInstalled();
  const dir = join(LOG_DIR, '..', 'pushpin');
  const run = join(dir, 'run');
  mkdirSync(run, { recursive: true });
  mkdirSync(join(dir, 'log'), { recursive: true });
  const [httpPort, backendPort] = [await freePort(), await freePort()];

  writeFileSync(
    join(dir, 'zurl.conf'),
    [
      '[General]',
      `in_spec=ipc://${run}/zurl-in`,
      `in_stream_spec=ipc://${run}/zurl-in-stream`,
      `out_spec=ipc://${run}/zurl-out`,
      `in_req_spec=ipc://${run}/zurl-req`,
      'defpolicy=allow',
      'allow=',
      'deny=',
      'max_open_requests=40000',
      'buffer_size=200000',
      'timeout=600',
      'in_hwm=20000',
      'out_hwm=20000',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'routes'), `* 127.0.0.1:${backendPort}\n`);
  let conf = readFileSync('/etc/pushpin/pushpin.conf', 'utf8');
  const set = (key: string, value: string): void => {
    conf = conf.replace(new RegExp(`^${key}=.*$`, 'm'), `${key}=${value}`);
  };
  set('rundir', run);
  set('logdir', join(dir, 'log'));
  set('http_port', String(httpPort));
  set('services', 'condure,pushpin-proxy,pushpin-handler');
  set('routesfile', join(dir, 'routes'));
  set('message_rate', '0');
  set('message_hwm', '10000000');
  set('client_maxconn', '50000');
  conf = conf.replace(
    '[proxy]\n',
    `[proxy]\nzurl_out_specs=ipc://${run}/zurl-in\nzurl_out_stream_specs=ipc://${run}/zurl-in-stream\nzurl_in_specs=ipc://${run}/zurl-out\n`,
  );
  writeFileSync(join(dir, 'pushpin.conf'), conf);

  const backend: Proc = startProc('pushpin-backend', process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../peers/pushpin-backend.ts', import.meta.url))], {
    PORT: String(backendPort),
  });
  const zurl = startProc('zurl', 'zurl', [`--config=${join(dir, 'zurl.conf')}`]);
  const pushpin = startProc('pushpin', 'pushpin', [`--config=${join(dir, 'pushpin.conf')}`]);
  await waitUntil(() => httpOk('http://127.0.0.1:5561/publish/', { method: 'POST', body: '{"items":[]}' }), 'pushpin publish endpoint', BENCH_START);
  await waitUntil(async () => (await httpStatus(`http://127.0.0.1:${httpPort}/?host=probe`, { signal: AbortSignal.timeout(300) })) === 200, 'pushpin proxy', BENCH_START);

  /** Every process of the Pushpin family (the runner forks condure, proxy and handler). */
  const family = (): number[] => {
    const r = spawnSync('pgrep', ['-f', `(pushpin|condure|zurl).*${dir}|${dir}.*(pushpin|condure|zurl)`], { encoding: 'utf8' });
    const pids = r.stdout.split('\n').filter((l) => l !== '').map(Number);
    return [...new Set([...pids, pushpin.pid, zurl.pid])];
  };
  const condurePid = (): number => {
    const r = spawnSync('pgrep', ['-f', `condure.*${run}`], { encoding: 'utf8' });
    return Number(r.stdout.split('\n')[0]) || pushpin.pid;
  };
  const endpoint = { host: '127.0.0.1', port: httpPort };
  return {
    name: 'pushpin',
    pids: family,
    streamPid: condurePid,
    streamSpec: (count, channels, concurrency) => ({
      endpoint,
      count,
      channels,
      // Bursts of 200+ simultaneous new connections get some 502s from Pushpin; 100 at a time work.
      concurrency: Math.min(concurrency, 100),
      template: 'GET /?host={channel} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n',
      readyMarker: ': ok',
    }),
    publishSpec: (channels, perSecond, connections) => ({
      endpoint: { host: '127.0.0.1', port: 5561 },
      path: '/publish/',
      headers: {},
      body: publishBody(),
      channels,
      perSecond,
      connections,
    }),
    async stop() {
      await pushpin.stop();
      await zurl.stop();
      await backend.stop();
      if (existsSync(run)) spawnSync('pkill', ['-f', run]);
    },
  };
}
