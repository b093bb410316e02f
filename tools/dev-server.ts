// npm start: the all-in-one development relay. A local nats-server with JetStream under .data/
// (unless NATS_URL is set), offline identities (unless PROFILE_API_URL is set), one port for both
// verbs, a development key with every scope, printed with curl commands that work as printed, and
// the operator's console on 127.0.0.1 with a sign-in link.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../services/core/config.js';
import { maskUrls } from '../services/core/secret-shapes.js';
import type { CreatedKey } from '../services/core/keys.js';
import { createLogger } from '../services/core/logger.js';
import { setUpFromConfig } from '../services/core/nats-setup.js';
import { ALL_SCOPES } from '../services/core/scopes.js';
import { startAdminServer, type AdminServer } from '../services/admin/admin-server.js';
import { startRelayServer, type RelayServer } from '../services/server.js';
import { runUntilSignalled } from '../services/signals.js';
import { buildConsole } from './console-build.js';
import { startNatsNode, type NatsNode } from './nats-launcher.js';
import { freePort, portFree } from './ports.js';

const DATA_DIR = resolve('.data');
const KEY_FILE = join(DATA_DIR, 'dev-key.json');

export async function runDevServer(): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  env['PROFILE_API_URL'] ??= 'offline';
  env['NODE_ENV'] ??= 'development';
  // Offline identities let anyone be anyone: this machine only, unless HOST says otherwise (the
  // schema's 0.0.0.0 is for the deployables, which sit behind a proxy).
  if ((env['HOST'] ?? '') === '') env['HOST'] = '127.0.0.1';
  const config = loadConfig('all', env);
  let nats: NatsNode | null = null;
  const startNats = config.devNats === 'true' || (config.devNats === 'auto' && process.env['NATS_URL'] === undefined);
  if (startNats) {
    mkdirSync(DATA_DIR, { recursive: true });
    const port = (await portFree(4222)) ? 4222 : await freePort();
    process.stderr.write(`starting nats-server with JetStream on 127.0.0.1:${port} (data in .data/nats)\n`);
    // Ctrl-C signals the terminal's whole process group: a nats-server in it stopped at once, and the
    // relay then waited SHUTDOWN_TIMEOUT (10 s) to drain into a server that had gone. In its own
    // group it is stopped after the relay has closed; the exit hook covers a second Ctrl-C.
    const node = await startNatsNode({ storeDir: join(DATA_DIR, 'nats'), port, serverName: 'relay-dev', logFile: join(DATA_DIR, 'nats.log'), ownProcessGroup: true });
    process.once('exit', () => node.process.kill('SIGTERM'));
    nats = node;
    env['NATS_URL'] = nats.url;
  }
  // The console is this machine's only, whatever HOST says; its token is new at every start unless
  // ADMIN_TOKEN names one (then the link carries no token: the operator has it).
  const ownToken = (env['ADMIN_TOKEN'] ?? '') === '' && (env['ADMIN_TOKENS'] ?? '') === '';
  if (ownToken) env['ADMIN_TOKEN'] = randomBytes(24).toString('hex');
  if ((env['ADMIN_HOST'] ?? '') === '') env['ADMIN_HOST'] = '127.0.0.1';
  if ((env['ADMIN_PORT'] ?? '') === '') env['ADMIN_PORT'] = String((await portFree(8090)) ? 8090 : await freePort());
  await buildConsole();
  // The operator's step, done for you here: with NATS_URL pointing at a mesh whose users follow
  // infra/nats/permissions.conf, the services' own credentials could not create anything.
  try {
    await setUpFromConfig(loadConfig('all', env), createLogger({ level: 'warn', pretty: false, destination: process.stderr }));
  } catch (e) {
    await nats?.stop();
    throw e;
  }
  let server: RelayServer;
  let admin: AdminServer;
  try {
    server = await startRelayServer({ service: 'all', config: loadConfig('all', env) });
  } catch (e) {
    await nats?.stop();
    throw e;
  }
  try {
    admin = await startAdminServer({ env });
  } catch (e) {
    await server.close();
    await nats?.stop();
    throw e;
  }
  const key = await devKey(server);
  const both = {
    logger: server.logger,
    close: async () => {
      await admin.close();
      await server.close();
    },
  };
  const stopped = runUntilSignalled(both, async () => {
    await nats?.stop();
  });
  // The banner says Ctrl-C stops the relay: the handler is in place before anyone can read that.
  process.stdout.write(banner(server, key, config.profile.url === 'offline'));
  process.stdout.write(consoleBanner(admin, ownToken ? (env['ADMIN_TOKEN'] ?? null) : null));
  await stopped;
}

function consoleBanner(admin: AdminServer, token: string | null): string {
  return [
    token !== null
      ? `Operator's console: ${admin.url}/#token=${token}`
      : `Operator's console: ${admin.url}/  (sign in with your ADMIN_TOKEN)`,
    `  (this machine only; the token is new at every start unless ADMIN_TOKEN is set)`,
    '',
  ].join('\n');
}

/** Reuses the key from .data/dev-key.json while it still works, so curl commands stay valid. */
async function devKey(server: RelayServer): Promise<CreatedKey> {
  if (existsSync(KEY_FILE)) {
    try {
      const saved = JSON.parse(readFileSync(KEY_FILE, 'utf8')) as CreatedKey;
      if (server.core.keys.check(saved.clientId, saved.clientSecret).status === 'ok') return saved;
    } catch {
      // unreadable: make a new one
    }
  }
  const key = await server.core.keys.create({ scopes: [...ALL_SCOPES], label: 'development (npm start)' });
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(KEY_FILE, JSON.stringify(key, null, 2) + '\n', { mode: 0o600 });
  return key;
}

/** Where the server really listens, and who can therefore reach it. */
function reach(server: RelayServer, offline: boolean): string {
  const bound = server.app.server.address();
  const where = bound !== null && typeof bound === 'object' ? `${bound.address}:${bound.port}` : server.config.host;
  if (/^(127\.|::1$|localhost$)/.test(server.config.host)) {
    return `Bound to ${where}: only this machine can reach it (HOST=0.0.0.0 npm start exposes it to the network).`;
  }
  return `Bound to ${where}: reachable from the network${offline ? ', where anyone can be anyone with offline identities' : ''}.`;
}

function banner(server: RelayServer, key: CreatedKey, offline: boolean): string {
  const url = `${server.url}/`;
  const who = (name: string): string => (offline ? `offline:${name}` : '<game access token>');
  const common = `-H 'Client-ID: ${key.clientId}' -H 'Client-Secret: ${key.clientSecret}' -H 'X-IRC-Multiplayer-Server: play.example.net'`;
  return [
    '',
    `Channel relay (development) listening on ${server.url}  (GET and POST on / and /irc)`,
    reach(server, offline),
    '',
    `Development key (every scope; saved in .data/dev-key.json):`,
    `  client id:     ${key.clientId}`,
    `  client secret: ${key.clientSecret}`,
    offline
      ? `Identities are offline (PROFILE_API_URL=offline): "Bearer offline:<name>" is player <name>.`
      : `Sessions are checked against ${maskUrls(server.config.profile.url)}.`,
    '',
    'Open a stream as Alice (leave it running):',
    `  curl -N -H 'Accept: text/event-stream' -H 'Authorization: Bearer ${who('Alice')}' ${common} ${url}`,
    '',
    'Then, in another terminal, post a chat as Bob:',
    `  curl -H 'Content-Type: application/json' -H 'Authorization: Bearer ${who('Bob')}' ${common} -d '{"type":"chat","message":"hello"}' ${url}`,
    '',
    `Health: ${server.url}/healthz  Readiness: ${server.url}/readyz  Metrics: ${server.url}/metrics`,
    'Ctrl-C stops the relay (and the nats-server it started).',
    '',
  ].join('\n');
}
