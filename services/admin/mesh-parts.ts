// What the console shows of one region (or of a mesh without regions): its processes' heartbeats
// and its streams' claims, each region's kept in its own buckets (docs/REGIONS.md). The admin service
// reads every region's; one that cannot be read when it starts (cut off from the others) must not
// keep the service from starting, or hide the others: it is tried again until it answers.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { NodeRecord, StreamClaim } from '../../schemas/records.js';
import { KvMirror } from '../core/kv-mirror.js';
import type { Logger } from '../core/logger.js';
import { NodeLiveness } from '../core/node-liveness.js';
import { parseStreamClaim } from '../core/records.js';
import { claimsBucket } from '../core/subjects.js';

/** How long a region's buckets may take to read at start before the service goes on without it. */
const START_WITHIN_MS = 5_000;
/** How often a region not read yet is tried again. */
const RETRY_MS = 15_000;

interface Watch {
  liveness: NodeLiveness;
  claims: KvMirror<StreamClaim>;
}

export interface PartsOptions {
  js: JetStreamClient;
  region: string | null;
  nodeTimeoutMs: number;
  logger: Logger;
  /** A heartbeat heard (previous: the node's record before it). */
  onBeat(record: NodeRecord, previous: NodeRecord | undefined): void;
  onGone(previous: NodeRecord): void;
}

export class MeshParts {
  readonly region: string | null;
  private readonly options: PartsOptions;
  private watch: Watch | null = null;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(options: PartsOptions) {
    this.region = options.region;
    this.options = options;
  }

  /** Reads the region's buckets; without regions a failure is the service's, with them it is retried. */
  async start(): Promise<void> {
    if (this.region === null) {
      const watch = this.create();
      try {
        await this.load(watch);
      } catch (e) {
        await this.close(watch);
        throw e;
      }
      this.watch = watch;
      return;
    }
    await this.attempt();
  }

  liveness(): NodeLiveness | null {
    return this.watch?.liveness ?? null;
  }

  claims(): Iterable<StreamClaim> {
    return this.watch?.claims.values() ?? [];
  }

  get claimCount(): number {
    return this.watch?.claims.size ?? 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.close(this.watch);
    this.watch = null;
  }

  private create(): Watch {
    const { js, region, nodeTimeoutMs, logger } = this.options;
    const liveness = new NodeLiveness(js, region, nodeTimeoutMs, logger);
    const claims = new KvMirror(js, claimsBucket(region), parseStreamClaim, logger);
    liveness.mirror.on('put', (_key, record, _revision, previous) => this.options.onBeat(record, previous));
    liveness.mirror.on('delete', (_key, previous) => {
      if (previous !== undefined) this.options.onGone(previous);
    });
    return { liveness, claims };
  }

  private async load(watch: Watch): Promise<void> {
    await Promise.all([watch.liveness.start(), watch.claims.start()]);
  }

  /** One try within START_WITHIN_MS; a try too slow or failed is stopped whole, and made again later. */
  private async attempt(): Promise<void> {
    const watch = this.create();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), START_WITHIN_MS);
    });
    try {
      const loading = this.load(watch).then(() => 'loaded' as const);
      // A try given up on may still fail after: no one waits for it then.
      loading.catch(() => undefined);
      const outcome = await Promise.race([loading, late]);
      if (outcome === 'loaded' && !this.stopped) {
        this.watch = watch;
        return;
      }
      await this.close(watch);
      if (outcome === 'late') this.later(new Error(`not read within ${START_WITHIN_MS / 1000} s`));
    } catch (err) {
      await this.close(watch);
      this.later(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private later(err: unknown): void {
    if (this.stopped) return;
    this.options.logger.warn({ err, region: this.region }, "a region's heartbeats and stream claims could not be read (is it cut off from the others?); the console lacks them until they can, tried again every 15 s");
    this.retry = setTimeout(() => void this.attempt(), RETRY_MS).unref();
  }

  private async close(watch: Watch | null): Promise<void> {
    if (watch === null) return;
    await Promise.all([watch.liveness.stop(), watch.claims.stop()]).catch(() => undefined);
  }
}
