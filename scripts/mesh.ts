// npm run mesh [-- start|stop|status]: a whole mesh on loopback for local experiments. A three-node
// NATS JetStream cluster (infra/nats/n1..n3.conf), two gateways and two ingresses, each its own OS
// process, with offline identities and a key printed with curl commands, and the admin service
// (the operator's console) with a sign-in link. Ctrl-C stops exactly what
// it started; `npm run mesh -- stop` does the same from another terminal, from .mesh/state.json.
// `npm run mesh -- --regions 3` runs a mesh of regions instead (scripts/mesh-regions.ts).

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../services/core/config.js';
import { KeyStore } from '../services/core/keys.js';
import { createLogger } from '../services/core/logger.js';
import { openNatsContext } from '../services/core/nats.js';
import { setUpFromConfig } from '../services/core/nats-setup.js';
import { ALL_SCOPES } from '../services/core/scopes.js';
import { buildConsole } from '../tools/console-build.js';
import { findNatsServer, waitHealthy } from '../tools/nats-launcher.js';
import { pollUntil } from '../tools/poll.js';
import { portFree } from '../tools/ports.js';
import { startRelayProcess, waitReady, type RelayProcess } from '../tools/relay-process.js';
import { startRegions } from './mesh-regions.js';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const DIR = join(ROOT, '.mesh');
const STATE = join(DIR, 'state.json');
const LOGS = join(DIR, 'logs');
const NATS = [1, 2, 3].map((n) => ({ name: `n${n}`, conf: join(ROOT, 'infra', 'nats', `n${n}.conf`), client: 4221 + n, cluster: 6221 + n, monitor: 8221 + n }));
const GATEWAYS = [8081, 8082];
const INGRESSES = [8091, 8092];
const ADMIN = 8090;
const NATS_URL = NATS.map((n) => `nats://127.0.0.1:${n.client}`).join(',');

interface State {
  startedAt: string;
  processes: Array<{ name: string; pid: number; match: string }>;
  key: { clientId: string; clientSecret: string };
  adminToken: string;
}

function log(line: string): void {
  process.stdout.write(line + '\n');
}

function alive(pid: number, match: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(match);
  } catch {
    return false;
  }
}

/** Stops the processes of a state file, newest first, and forgets them. */
async function stop(state: State): Promise<void> {
  for (const p of [...state.processes].reverse()) {
    if (!alive(p.pid, p.match)) continue;
    process.kill(p.pid, 'SIGTERM');
    const gone = await pollUntil(() => !alive(p.pid, p.match), { timeoutMs: 10_000, intervalMs: 50 });
    if (gone === undefined && alive(p.pid, p.match)) process.kill(p.pid, 'SIGKILL');
    log(`stopped ${p.name} (pid ${p.pid})`);
  }
  rmSync(STATE, { force: true });
}

async function start(): Promise<void> {
  if (existsSync(STATE)) {
    const old = JSON.parse(readFileSync(STATE, 'utf8')) as State;
    if (old.processes.some((p) => alive(p.pid, p.match))) {
      throw new Error('a mesh is already running (see .mesh/state.json); stop it with: npm run mesh -- stop');
    }
  }
  const ports = [...NATS.flatMap((n) => [n.client, n.cluster, n.monitor]), ...GATEWAYS, ...INGRESSES, ADMIN];
  const busy: number[] = [];
  for (const p of ports) if (!(await portFree(p))) busy.push(p);
  if (busy.length > 0) throw new Error(`ports in use: ${busy.join(', ')} (is npm start or another mesh running?)`);

  mkdirSync(LOGS, { recursive: true });
  await buildConsole();
  const binary = findNatsServer();
  const state: State = { startedAt: new Date().toISOString(), processes: [], key: { clientId: '', clientSecret: '' }, adminToken: randomBytes(24).toString('hex') };
  const save = (): void => writeFileSync(STATE, JSON.stringify(state, null, 2) + '\n');
  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log('\nstopping the mesh...');
    await stop(state);
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());

  try {
    for (const n of NATS) {
      const out = openSync(join(LOGS, `nats-${n.name}.log`), 'w');
      const child = spawn(binary, ['-c', n.conf], { cwd: ROOT, stdio: ['ignore', out, out] });
      state.processes.push({ name: `nats ${n.name}`, pid: child.pid!, match: n.conf });
      save();
    }
    await Promise.all(NATS.map((n) => waitHealthy({ monitorPort: n.monitor }, '', undefined, 30_000)));
    log(`nats cluster up: ${NATS_URL}`);

    const env = {
      NATS_URL,
      STREAM_REPLICAS: '3',
      KV_REPLICAS: '3',
      PROFILE_API_URL: 'offline',
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
    };
    // The operator's set-up (relay setup), before any service starts against it.
    const config = loadConfig('all', env);
    const quiet = createLogger({ level: 'warn', pretty: false });
    await setUpFromConfig(config, quiet);
    const ctx = await openNatsContext(config, 'mesh-script', quiet);
    const key = await new KeyStore(ctx.js, ctx.buckets.keys, quiet).create({ scopes: [...ALL_SCOPES], label: 'npm run mesh' });
    await ctx.nc.drain();
    state.key = { clientId: key.clientId, clientSecret: key.clientSecret };

    const roles = [...GATEWAYS.map((port, i) => ['gateway', port, `gateway-${i + 1}`] as const), ...INGRESSES.map((port, i) => ['ingress', port, `ingress-${i + 1}`] as const)];
    const relays: RelayProcess[] = [];
    for (const [kind, port, id] of roles) {
      const p = await startRelayProcess(kind, { ...env, PORT: String(port), RELAY_NODE_ID: id }, { logDir: LOGS, waitReady: false });
      relays.push(p);
      state.processes.push({ name: id, pid: p.child.pid!, match: 'relay.js' });
      save();
    }
    const admin = await startRelayProcess('admin', { ...env, ADMIN_PORT: String(ADMIN), ADMIN_TOKEN: state.adminToken, RELAY_NODE_ID: 'admin' }, { logDir: LOGS, waitReady: false });
    relays.push(admin);
    state.processes.push({ name: 'admin', pid: admin.child.pid!, match: 'relay.js' });
    save();
    // All start at once; each is then awaited (and one that exits is reported with its log).
    await Promise.all(relays.map((p) => waitReady(p)));
  } catch (e) {
    await stop(state);
    throw e;
  }

  const auth = `-H 'Client-ID: ${state.key.clientId}' -H 'Client-Secret: ${state.key.clientSecret}' -H 'X-IRC-Multiplayer-Server: play.example.net'`;
  log(`
The mesh is up (logs in .mesh/logs/):
  NATS      ${NATS_URL}
  gateways  http://127.0.0.1:${GATEWAYS[0]}  http://127.0.0.1:${GATEWAYS[1]}   (GET streams)
  ingresses http://127.0.0.1:${INGRESSES[0]}  http://127.0.0.1:${INGRESSES[1]}   (POST)
  key       ${state.key.clientId} / ${state.key.clientSecret}   (every scope; identities are offline)
  console   http://127.0.0.1:${ADMIN}/#token=${state.adminToken}

Alice listens on gateway 1:
  curl -N -H 'Accept: text/event-stream' -H 'Authorization: Bearer offline:Alice' ${auth} http://127.0.0.1:${GATEWAYS[0]}/

Bob posts through ingress 2 and Alice hears him:
  curl -H 'Content-Type: application/json' -H 'Authorization: Bearer offline:Bob' ${auth} -d '{"type":"chat","message":"hi from the other side"}' http://127.0.0.1:${INGRESSES[1]}/

Alice opening a second stream on gateway 2 evicts the first (it ends with ": evicted: ..."); kill a
gateway (kill -9 <pid in .mesh/state.json>) and reconnect to the other with -H 'Last-Event-ID: <id>'
to resume without loss. See who holds what:  NATS_URL=${NATS_URL} npx relay streams

Ctrl-C stops everything this started (or: npm run mesh -- stop).`);
  await new Promise<void>(() => undefined);
}

async function status(): Promise<void> {
  if (!existsSync(STATE)) {
    log('no mesh is running (no .mesh/state.json)');
    return;
  }
  const state = JSON.parse(readFileSync(STATE, 'utf8')) as State;
  for (const p of state.processes) log(`${p.name.padEnd(10)} pid ${String(p.pid).padEnd(8)} ${alive(p.pid, p.match) ? 'running' : 'gone'}`);
  log(`key ${state.key.clientId} / ${state.key.clientSecret}`);
}

const command = process.argv[2] ?? 'start';
try {
  if (command === '--regions') await startRegions(Number(process.argv[3]), ROOT);
  else if (command === 'start') await start();
  else if (command === 'stop') {
    if (!existsSync(STATE)) log('no mesh is running (no .mesh/state.json)');
    else await stop(JSON.parse(readFileSync(STATE, 'utf8')) as State);
  } else if (command === 'status') await status();
  else throw new Error(`unknown command "${command}": use start, stop or status`);
} catch (e) {
  process.stderr.write(`mesh: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
