// A mesh for a test: three clustered nats-server processes, a real profile API over HTTP, and
// gateways and ingresses as separate OS processes (`relay serve ...`), as in production.
import { BanStore } from '../../services/core/bans.js';
import { loadConfig } from '../../services/core/config.js';
import { KeyStore, type CreatedKey } from '../../services/core/keys.js';
import { createLogger } from '../../services/core/logger.js';
import { openNatsContext, type NatsContext } from '../../services/core/nats.js';
import { startRelayProcess, type RelayProcess } from '../../tools/relay-process.js';
import { clientHeaders, newPlayer, postTo, type Player, type PostResult } from './clients.js';
import { startTestCluster } from './nats.js';
import { setUpNats, SETUP_VARIABLES } from './nats-setup.js';
import { startProfileApi, type FakeProfileApi } from './profile-api.js';
import { openStream, type OpenOptions, type SseStream } from './sse-client.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';

export interface MeshOptions {
  gateways?: number;
  ingresses?: number;
  env?: Record<string, string>;
}

type Cluster = Awaited<ReturnType<typeof startTestCluster>>;

export class Mesh {
  readonly cluster: Cluster;
  readonly profile: FakeProfileApi;
  readonly env: Record<string, string>;
  readonly gateways: RelayProcess[] = [];
  readonly ingresses: RelayProcess[] = [];
  /** A direct line to NATS for the test itself (keys, bans, reading the log). */
  readonly nats: NatsContext;
  readonly keys: KeyStore;
  readonly bans: BanStore;
  private readonly streams: SseStream[] = [];
  private counter = 0;

  private constructor(cluster: Cluster, profile: FakeProfileApi, env: Record<string, string>, nats: NatsContext) {
    this.cluster = cluster;
    this.profile = profile;
    this.env = env;
    this.nats = nats;
    const logger = createLogger({ level: 'warn', pretty: false });
    this.keys = new KeyStore(nats.js, nats.buckets.keys, logger);
    this.bans = new BanStore(nats.js, nats.buckets.bans, logger, null);
  }

  static async start(options: MeshOptions = {}): Promise<Mesh> {
    const cluster = await startTestCluster();
    const profile = await startProfileApi();
    const env = {
      NATS_URL: cluster.urls,
      PROFILE_API_URL: profile.url,
      STREAM_REPLICAS: '3',
      KV_REPLICAS: '3',
      NODE_TIMEOUT: '3s',
      PUBLISH_TIMEOUT: '3s',
      RATE_LIMIT_PER_SECOND: '0',
      RATE_LIMIT_BYTES_PER_SECOND: '0',
      // Every player comes from 127.0.0.1 (one address's look-up rate would refuse most of them).
      PROFILE_API_RATE_PER_ADDRESS: '0',
      ...options.env,
    };
    // The operator's set-up (R3 streams and buckets), before any service starts.
    await setUpNats(cluster.urls, env);
    const nats = await openNatsContext(loadConfig('all', env), 'mesh-test', createLogger({ level: 'warn', pretty: false }));
    const mesh = new Mesh(cluster, profile, env, nats);
    const started = await Promise.allSettled([
      ...Array.from({ length: options.gateways ?? 2 }, () => mesh.addGateway()),
      ...Array.from({ length: options.ingresses ?? 2 }, () => mesh.addIngress()),
    ]);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed !== undefined) {
      // A relay that did not come up (a loaded machine) must not leave the others, and the cluster,
      // running after the test file has given up.
      await mesh.close();
      throw failed.reason;
    }
    return mesh;
  }

  async addGateway(env: Record<string, string> = {}): Promise<RelayProcess> {
    // A gateway given its own stream settings (CLAIM_TTL): the operator applies them first.
    if (Object.keys(env).some((name) => SETUP_VARIABLES.has(name))) await setUpNats(this.cluster.urls, { ...this.env, ...env });
    const p = await startRelayProcess('gateway', { ...this.env, RELAY_NODE_ID: `gateway-${++this.counter}`, ...env });
    this.gateways.push(p);
    return p;
  }

  async addIngress(env: Record<string, string> = {}): Promise<RelayProcess> {
    const p = await startRelayProcess('ingress', { ...this.env, RELAY_NODE_ID: `ingress-${++this.counter}`, ...env });
    this.ingresses.push(p);
    return p;
  }

  createKey(scopes: readonly string[] = ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated')): Promise<CreatedKey> {
    return this.keys.create({ scopes: [...scopes] });
  }

  player(name?: string): Player {
    return newPlayer(this.profile, name);
  }

  headers(player: Player | null, key: CreatedKey | null, channel?: string | null, extra: Record<string, string> = {}): Record<string, string> {
    return clientHeaders(player, key, channel, extra);
  }

  post(ingress: RelayProcess, body: unknown, headers: Record<string, string>): Promise<PostResult> {
    return postTo(ingress.url, body, headers);
  }

  async open(gateway: RelayProcess, headers: Record<string, string>, options: Omit<OpenOptions, 'headers'> = {}): Promise<SseStream> {
    const s = await openStream(gateway.url, { ...options, headers });
    this.streams.push(s);
    return s;
  }

  /** Opens a stream and waits until the gateway is subscribed. */
  async connect(gateway: RelayProcess, headers: Record<string, string>): Promise<SseStream> {
    const s = await this.open(gateway, headers);
    if (s.status !== 200) throw new Error(`stream refused by ${gateway.nodeId}: ${JSON.stringify((await s.refusal()).body)}`);
    await s.waitForComment(/^connected/);
    return s;
  }

  /** The logs of every process, for a failing test's message. */
  logs(): string {
    return [...this.gateways, ...this.ingresses].map((p) => `--- ${p.nodeId}\n${p.log().split('\n').slice(-30).join('\n')}`).join('\n');
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
    await Promise.all([...this.gateways, ...this.ingresses].map((p) => p.kill()));
    await this.keys.stop();
    await this.bans.stop();
    await this.nats.nc.close();
    await this.profile.close();
    await this.cluster.remove();
  }
}
