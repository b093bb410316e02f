// npm run mesh -- --regions N: a mesh of N regions on loopback (docs/REGIONS.md). One nats-server per
// region, joined into a super-cluster by gateways whose every link passes through a proxy
// (tools/nats-super-cluster.ts), then `relay setup` with REGIONS, and an ingress and a gateway per
// region, each its own OS process with REGION set, offline identities and a key printed with curl
// commands, and the admin service (the console) in the home region, as the operator's tools run. Type
// `cut <region>` or `heal` at its prompt to cut a region off and bring it back. Ctrl-C stops it all.

import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../services/core/config.js';
import { KeyStore } from '../services/core/keys.js';
import { createLogger } from '../services/core/logger.js';
import { openNatsContext } from '../services/core/nats.js';
import { setUpFromConfig } from '../services/core/nats-setup.js';
import { ALL_SCOPES } from '../services/core/scopes.js';
import { startSuperCluster } from '../tools/nats-super-cluster.js';
import { startRelayProcess, waitReady, type RelayProcess } from '../tools/relay-process.js';

const NAMES = ['eu', 'us', 'ap', 'sa', 'af', 'oc', 'me', 'ca', 'in', 'jp', 'kr', 'uk', 'de', 'fr', 'br', 'mx'];
const log = (line: string): void => void process.stdout.write(line + '\n');
const ADMIN_PORT = 8090;

export async function startRegions(count: number, root: string): Promise<void> {
  if (!Number.isInteger(count) || count < 3 || count > NAMES.length) throw new Error(`--regions takes 3 to ${NAMES.length} (JetStream's meta group needs a majority of regions)`);
  const regions = NAMES.slice(0, count);
  const dir = join(root, '.mesh', 'regions');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const logs = join(root, '.mesh', 'logs');
  log(`starting ${count} regions (${regions.join(', ')}), one nats-server each...`);
  const sc = await startSuperCluster(dir, regions);
  const relays: RelayProcess[] = [];
  const shutdown = async (): Promise<never> => {
    log('\nstopping the regions...');
    for (const p of relays.reverse()) await p.stop();
    await sc.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());

  const mesh = { REGIONS: regions.join(','), REGION_HOME: regions[0]!, PROFILE_API_URL: 'offline', NODE_ENV: 'development', LOG_LEVEL: 'info' };
  const quiet = createLogger({ level: 'warn', pretty: false });
  // The operator's set-up, once for the whole super-cluster, then a key written in the home region.
  const config = loadConfig('gateway', { ...mesh, REGION: regions[0]!, NATS_URL: sc.region(regions[0]!).url });
  await setUpFromConfig(config, quiet);
  const ctx = await openNatsContext(config, 'mesh-regions', quiet);
  const key = await new KeyStore(ctx.js, ctx.buckets.keys, quiet).create({ scopes: [...ALL_SCOPES], label: 'npm run mesh -- --regions' });
  await ctx.nc.drain();

  for (const [i, r] of regions.entries()) {
    for (const [kind, port] of [['ingress', 8091 + i], ['gateway', 8081 + i]] as const) {
      const env = { ...mesh, REGION: r, NATS_URL: sc.region(r).url, PORT: String(port), RELAY_NODE_ID: `${kind}-${r}` };
      relays.push(await startRelayProcess(kind, env, { logDir: logs, waitReady: false }));
    }
  }
  // The operator's tools act as the home region wherever they run (docs/REGIONS.md): here, in it.
  const adminToken = randomBytes(24).toString('hex');
  const adminEnv = { ...mesh, NATS_URL: sc.region(regions[0]!).url, ADMIN_PORT: String(ADMIN_PORT), ADMIN_TOKEN: adminToken, RELAY_NODE_ID: 'admin' };
  relays.push(await startRelayProcess('admin', adminEnv, { logDir: logs, waitReady: false }));
  await Promise.all(relays.map((p) => waitReady(p)));

  const auth = `-H 'Client-ID: ${key.clientId}' -H 'Client-Secret: ${key.clientSecret}' -H 'X-IRC-Multiplayer-Server: play.example.net'`;
  const at = (kind: 'ingress' | 'gateway', r: string): string => `http://127.0.0.1:${(kind === 'ingress' ? 8091 : 8081) + regions.indexOf(r)}/`;
  const [a, b, c] = regions as [string, string, string];
  log(`
${count} regions are up (logs in .mesh/logs/):
${regions.map((r) => `  ${r.padEnd(3)} NATS ${sc.region(r).url}   ingress ${at('ingress', r)}   gateway ${at('gateway', r)}`).join('\n')}
  key  ${key.clientId} / ${key.clientSecret}   (every scope; identities are offline)
  console   http://127.0.0.1:${ADMIN_PORT}/#token=${adminToken}   (in ${a}, the home region: every region's processes, streams and payloads)

Alice listens in ${a}, Carol in ${c}:
  curl -N -H 'Accept: text/event-stream' -H 'Authorization: Bearer offline:Alice' ${auth} ${at('gateway', a)}
  curl -N -H 'Accept: text/event-stream' -H 'Authorization: Bearer offline:Carol' ${auth} ${at('gateway', c)}

Bob posts in ${b}, and both hear him; each id names where the stream is in every region's log (${a}:3.${b}:7...):
  curl -H 'Content-Type: application/json' -H 'Authorization: Bearer offline:Bob' ${auth} -d '{"type":"chat","message":"hi from ${b}"}' ${at('ingress', b)}

Stop Alice's curl, post again, and resume her in another region with her last id: she gets what she missed, once.
  curl -N -H 'Accept: text/event-stream' -H 'Authorization: Bearer offline:Alice' -H 'Last-Event-ID: <her last id>' ${auth} ${at('gateway', b)}

Type "cut ${b}" here, post in ${b} and in ${c}: each region hears its own players; type "heal" and each hears the other's.

With ${c} cut, post as Mallory in ${c} with a wrong Client-Secret: ${c} bans her at once (a cracked client), the others once you "heal".
  curl -H 'Content-Type: application/json' -H 'Authorization: Bearer offline:Mallory' -H 'Client-ID: ${key.clientId}' -H 'Client-Secret: wrong' -H 'X-IRC-Multiplayer-Server: play.example.net' -d '{"type":"chat","message":"hi"}' ${at('ingress', c)}
Every region's bans, and a lift (it names a region it cannot reach):
  REGIONS=${mesh.REGIONS} NATS_URL=${sc.region(a).url} npx relay bans list
  REGIONS=${mesh.REGIONS} NATS_URL=${sc.region(a).url} npx relay bans remove <uuid>
Every region's log, oldest first, each entry named <region>:<seq>; and one entry's trace id:
  REGIONS=${mesh.REGIONS} NATS_URL=${sc.region(a).url} npx relay replay play.example.net
  REGIONS=${mesh.REGIONS} NATS_URL=${sc.region(a).url} npx relay trace ${b}:1
Ctrl-C stops everything this started.`);
  const prompt = createInterface({ input: process.stdin });
  prompt.on('line', (line) => {
    const [command, region] = line.trim().split(/\s+/);
    if (command === 'cut' && region !== undefined && regions.includes(region)) {
      sc.isolate(region);
      log(`region ${region} is cut off from the others`);
    } else if (command === 'heal') {
      sc.heal();
      log('every link passes again (the gateways reconnect within seconds)');
    } else if (command !== '') log(`commands: cut <${regions.join('|')}>, heal`);
  });
  await new Promise<void>(() => undefined);
}
