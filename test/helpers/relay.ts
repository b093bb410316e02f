// Starts a whole relay for a test: a real nats-server, a real HTTP server playing the profile API,
// and the relay itself listening on a free port. Logs are captured so tests can read them.

import { Writable } from 'node:stream';
import type { CreatedKey } from '../../services/core/keys.js';
import type { ServiceKind } from '../../services/core/config.js';
import { startRelayServer, type RelayServer } from '../../services/server.js';
import { ALL_SCOPES } from '../../services/core/scopes.js';
import { startProfileApi, type FakeProfileApi } from './profile-api.js';
import { startTestNats, type TestNats } from './nats.js';
import { setUpNats } from './nats-setup.js';
import { openStream, type OpenOptions, type SseStream } from './sse-client.js';
import { clientHeaders, newPlayer, postTo, type Player, type PostResult } from './clients.js';

export type { Player, PostResult };

export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
    this.emit('lines');
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }

  /** The first line logged (before or after the call) whose message is `msg`, parsed; fails after `timeoutMs`. */
  async line(msg: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const find = (): Record<string, unknown> | undefined =>
      this.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((entry) => entry['msg'] === msg);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = find();
        if (found === undefined) return;
        clearTimeout(timer);
        this.off('lines', check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.off('lines', check);
        reject(new Error(`no "${msg}" logged within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on('lines', check);
      check();
    });
  }
}

export interface RelayOptions {
  env?: Record<string, string>;
  service?: Exclude<ServiceKind, 'admin'>;
  /** Share a nats-server / profile API with another relay of the same test. */
  nats?: TestNats;
  profile?: FakeProfileApi;
  /**
   * Run the operator's `relay setup` with `env` first (the default), as a deployment does before
   * its services start; false leaves NATS as it is (tests of what a service does when it is not).
   */
  setup?: boolean;
}

/** Fixtures started by this test process: each is a node of its own, as each process of a mesh is. */
let fixturesStarted = 0;

export class RelayFixture {
  readonly nats: TestNats;
  readonly profile: FakeProfileApi;
  readonly server: RelayServer;
  readonly logs: LogCapture;
  private readonly ownsNats: boolean;
  private readonly ownsProfile: boolean;
  private readonly streams: SseStream[] = [];

  private constructor(nats: TestNats, profile: FakeProfileApi, server: RelayServer, logs: LogCapture, owns: [boolean, boolean]) {
    this.nats = nats;
    this.profile = profile;
    this.server = server;
    this.logs = logs;
    [this.ownsNats, this.ownsProfile] = owns;
  }

  static async start(options: RelayOptions = {}): Promise<RelayFixture> {
    const nats = options.nats ?? (await startTestNats());
    const profile = options.profile ?? (await startProfileApi());
    const logs = new LogCapture();
    if (options.setup !== false) await setUpNats(nats.url, options.env);
    const server = await startRelayServer({
      service: options.service ?? 'all',
      env: {
        NATS_URL: nats.url,
        PROFILE_API_URL: profile.url,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        LOG_PRETTY: 'false',
        NODE_ENV: 'test',
        // Every test player comes from 127.0.0.1: one address's look-up rate would refuse most of
        // them. Tests of the rate set it (test/hardening-session-lookups.test.ts).
        PROFILE_API_RATE_PER_ADDRESS: '0',
        // The default (<hostname>-<pid>) is one id for every fixture of this process: one's stop
        // would take the others' heartbeat with it, and the others would stop being asked the owner census.
        RELAY_NODE_ID: `fixture-${process.pid}-${++fixturesStarted}`,
        ...options.env,
      },
      logDestination: logs,
    });
    return new RelayFixture(nats, profile, server, logs, [options.nats === undefined, options.profile === undefined]);
  }

  get url(): string {
    return this.server.url;
  }

  createKey(scopes: readonly string[] = ALL_SCOPES.filter((s) => s !== 'irc.connection.unauthenticated'), options: { label?: string; expiresAt?: string } = {}): Promise<CreatedKey> {
    return this.server.core.keys.create({ scopes: [...scopes], ...options });
  }

  /** A player with a live session at the fake profile API. */
  player(name?: string): Player {
    return newPlayer(this.profile, name);
  }

  /** The headers a real client sends. */
  headers(player: Player | null, key: CreatedKey | null, channel?: string | null, extra: Record<string, string> = {}): Record<string, string> {
    return clientHeaders(player, key, channel, extra);
  }

  post(body: unknown, headers: Record<string, string>, path = '/'): Promise<PostResult> {
    return postTo(this.url, body, headers, path);
  }

  async open(headers: Record<string, string>, options: Omit<OpenOptions, 'headers'> = {}): Promise<SseStream> {
    const s = await openStream(this.url, { ...options, headers });
    this.streams.push(s);
    return s;
  }

  /** Opens a stream and waits for the relay's greeting, so the stream is subscribed when it returns. */
  async connect(headers: Record<string, string>, options: Omit<OpenOptions, 'headers'> = {}): Promise<SseStream> {
    const s = await this.open(headers, options);
    if (s.status !== 200) {
      const r = await s.refusal();
      throw new Error(`stream refused: ${r.status} ${JSON.stringify(r.body)}`);
    }
    await s.waitForComment(/^connected/);
    return s;
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
    await this.server.close();
    if (this.ownsProfile) await this.profile.close();
    if (this.ownsNats) await this.nats.stop();
  }
}
