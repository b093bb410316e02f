// The gateway service: GET / and /irc open an SSE stream. It wires the rooms together (stream/,
// delivery/, resume/, ownership/) and keeps each flow one-way:
//   open:  admit -> check caps -> attach the stream -> register -> claim -> head -> join -> replay
//   evict: ownership names a stream -> the stream closes with a reason -> its end (below)
//   close: the stream announces its end once -> registry, hub and ownership forget it

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { STREAM_TIMINGS } from '../../schemas/stream-timings.js';
import { isRelayError, RelayError } from '../core/errors.js';
import { writeError } from '../core/http.js';
import { startAtZero } from '../core/metrics.js';
import { NodeLiveness } from '../core/node-liveness.js';
import type { RelayCore } from '../core/runtime.js';
import { Admission } from './admission.js';
import { ALL_CHANNELS } from './delivery/channel-group.js';
import { ChannelHub } from './delivery/channel-hub.js';
import { HeardLogs } from './delivery/heard-logs.js';
import { Keepalives } from './delivery/keepalives.js';
import { HeapCompaction } from './heap-compaction.js';
import { Ownership } from './ownership/ownership.js';
import { RegionLinks } from './region-links.js';
import { Replayer } from './resume/replay.js';
import { ResumeWindows } from './delivery/resume-window.js';
import { SilenceRecovery } from './silence-recovery.js';
import { ClientStream } from './stream/client-stream.js';
import { followCredentials } from './stream/credential-watch.js';
import { CloseReason } from './stream/close-reason.js';
import { readyFrames } from './stream/ready-frames.js';
import type { StreamContext } from './stream/stream-context.js';
import { StreamRegistry } from './stream/stream-registry.js';
import { TurnFlusher } from './stream/turn-flusher.js';

const CLIENT_RETRY_MS = STREAM_TIMINGS.openRetryMs;

export class Gateway {
  private readonly core: RelayCore;
  private readonly hub: ChannelHub;
  private readonly logs: HeardLogs;
  private readonly ownership: Ownership;
  private readonly liveness: NodeLiveness;
  private readonly admission: Admission;
  private readonly registry = new StreamRegistry();
  private readonly streamContext: StreamContext;
  private readonly replayer: Replayer;
  private readonly keepalives: Keepalives;
  private readonly silence: SilenceRecovery;
  private readonly compaction: HeapCompaction;
  /** With regions: the links to the other regions, watched (region-links.ts). */
  private readonly links: RegionLinks | null;
  private draining = false;
  private toldStayedOnHttp = false;

  constructor(core: RelayCore) {
    this.core = core;
    const { nats, logger, metrics, config, auth } = core;
    startAtZero(metrics.streamsClosed, 'reason', Object.values(CloseReason));
    const flusher = new TurnFlusher(metrics);
    this.logs = HeardLogs.of(config.regions);
    this.hub = new ChannelHub({
      nc: nats.nc,
      jsm: nats.jsm,
      logger,
      metrics,
      windows: new ResumeWindows(config.gateway.resumeWindowBytes, metrics),
      flusher,
      tracer: core.tracing.tracer,
      metaShape: config.gateway.metaShape,
      logs: this.logs,
    });
    this.replayer = new Replayer({ jsm: nats.jsm, hub: this.hub, logger, metrics, tracer: core.tracing.tracer, logs: this.logs });
    this.keepalives = new Keepalives(this.hub, config.gateway.keepaliveMs);
    this.liveness = new NodeLiveness(nats.js, nats.region, config.gateway.nodeTimeoutMs, logger, config.nodeId);
    this.ownership = Ownership.overNats({
      nats,
      nodeId: config.nodeId,
      liveness: this.liveness,
      logger,
      // The bucket's max age as `relay setup` set it; CLAIM_TTL only where the bucket keeps claims for ever.
      claimTtlMs: nats.findings.claimTtlMs ?? config.claimTtlMs,
      received: metrics.claimMessages,
      unanswered: metrics.ownerCensusUnanswered,
      local: this.registry,
      evict: (id) => this.evict(id),
      regions: config.regions?.here == null ? null : { here: config.regions.here, all: config.regions.all },
    });
    metrics.observeRenewalOverdue(() => this.ownership.renewalOverdueMs());
    const here = config.regions?.here ?? null;
    this.links = here === null ? null : new RegionLinks({ jsm: nats.jsm, logs: this.logs, hub: this.hub, logger, here, returned: (r) => this.ownership.regionReturned(r) });
    this.silence = new SilenceRecovery({ hub: this.hub, ownership: this.ownership, logger, nodeTimeoutMs: config.gateway.nodeTimeoutMs, streams: () => this.registry.size });
    this.compaction = HeapCompaction.ofProcess({ burstOpens: config.gateway.compactAfterOpens, held: () => this.registry.size, logger, pauses: metrics.heapCompactions });
    this.admission = new Admission({
      auth,
      logger,
      draining: () => this.draining,
      addressOf: core.addressOf,
      opens: { perSecond: config.gateway.openRate, burst: config.gateway.openBurst },
      regions: this.logs.order,
    });
    this.streamContext = {
      scheduler: flusher,
      maxQueuedBytes: config.gateway.queueMaxBytes,
      ended: (stream, reason) => this.streamEnded(stream, reason),
      stayedOnHttp: () => {
        if (this.toldStayedOnHttp) return;
        this.toldStayedOnHttp = true;
        logger.warn({ node: process.version }, "streams stay on Node's HTTP server after their head: this Node's HTTP internals are not the ones the gateway knows, so each keeps about 3 KiB more memory");
      },
    };
  }

  /** Streams open on this node. */
  get streamCount(): number {
    return this.registry.size;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  async start(): Promise<void> {
    const { bans, keys, nats, config } = this.core;
    await this.liveness.start();
    await this.ownership.start(config.gateway.nodeTimeoutMs);
    followCredentials(keys, bans, this.registry);
    this.keepalives.start();
    this.silence.start(nats.nc);
    this.links?.start();
    this.compaction.start();
  }

  /** The process could not reach the mesh for a while (its heartbeat said so): its claims are read again. */
  afterSilence(why: string): void {
    this.silence.afterSilence(why);
  }

  /**
   * GET / and /irc, called straight from the HTTP server (not through fastify): a stream lives for
   * hours, so it keeps nothing per request but what delivery needs.
   */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const reqId = randomUUID();
    // The client may leave at any point of the open: the signal stops its session check, and the
    // stream (once it exists) ends with the connection, undoing the claim, subscription and replay.
    const left = new AbortController();
    // The response's close (one listener per request, where requests sent together share a socket):
    // `left` serves the steps before the stream exists, and the stream hears its socket itself.
    const onClose = (): void => left.abort();
    res.once('close', onClose);
    this.open(req, res, reqId, left.signal)
      .catch((err: unknown) => this.refuse(req, res, reqId, err))
      .finally(() => res.off('close', onClose));
  }

  private async open(req: IncomingMessage, res: ServerResponse, reqId: string, left: AbortSignal): Promise<void> {
    const { config, metrics, logger } = this.core;
    const request = await this.admission.admit(req, reqId, left);
    if (request === null) return;
    // Never fails: a gateway that does not answer in time is counted as holding nothing (owner-census.ts).
    const remote = await this.ownership.holdingsElsewhere(request.identity, config.gateway);
    if (left.aborted) return;
    // From the count to the registration, one turn: a burst of opens on this node is counted whole.
    this.ownership.checkCaps(request.identity, config.gateway, this.registry, remote);
    // From here the stream owns the connection: its end, whenever it comes, undoes all of this.
    const stream = ClientStream.attach(request.identity, res, this.streamContext);
    if (stream === null) return;
    // Registered before the claim is written: the caps count it, and a ban or revocation meanwhile finds it.
    this.registry.add(stream, request.keyExpiresAt);
    metrics.streamsOpen.set(this.registry.size);
    metrics.streamsOpened.inc();
    this.compaction.opened();
    try {
      await this.ownership.claim(stream);
    } catch (err) {
      stream.close(CloseReason.Error);
      throw new RelayError('unavailable', 'Could not register the stream; try again shortly.', { retryAfter: 1, cause: err });
    }
    if (!stream.open(CLIENT_RETRY_MS)) return;
    if (request.lastEventId !== null) stream.holdLiveFrames();
    try {
      const subscribing = this.hub.join(stream);
      if (subscribing !== null) {
        // A round trip to NATS (longer while it reconnects): the client has its head meanwhile.
        stream.sendHead();
        await subscribing;
      }
    } catch (err) {
      // The head is out: the stream ends with its close frames rather than staying half-open.
      logger.warn({ err, reqId }, 'could not subscribe a new stream to its channel');
      stream.close(CloseReason.Error);
      return;
    }
    if (stream.closed) return;
    // Sent once the node is subscribed: from here on nothing published to the channel is missed.
    stream.ready(readyFrames(stream.channel, ALL_CHANNELS, request.lastEventId, CLIENT_RETRY_MS, this.logs.order));
    if (request.lastEventId !== null) await this.replayer.replay(stream, request.lastEventId);
  }

  private refuse(req: IncomingMessage, res: ServerResponse, reqId: string, err: unknown): void {
    const { logger } = this.core;
    const error = isRelayError(err) ? err : new RelayError('internal_error', 'The relay failed to open this stream.', { cause: err });
    this.core.metrics.refusals.inc({ code: error.code });
    if (error.code === 'internal_error') logger.error({ err, reqId, url: req.url, headers: req.headers }, 'stream request failed');
    else logger.debug({ reqId, method: req.method, url: req.url, status: error.status, code: error.code, headers: req.headers }, 'refused');
    writeError(res, error);
  }

  /** Another connection won this stream's claim: the stream closes, and its end does the rest. */
  private evict(streamId: string): void {
    const stream = this.registry.get(streamId);
    if (stream === undefined) return;
    this.core.metrics.evictions.inc();
    stream.close(CloseReason.Evicted);
  }

  /** The single end path of every stream, whoever ended it. */
  private streamEnded(stream: ClientStream, reason: CloseReason): void {
    const { metrics } = this.core;
    this.registry.remove(stream);
    this.hub.leave(stream);
    this.ownership.release(stream);
    metrics.streamsOpen.set(this.registry.size);
    metrics.streamsClosed.inc({ reason });
    if (reason === CloseReason.SlowConsumer) metrics.framesDropped.inc({ reason: 'slow_consumer' });
  }

  /** Graceful drain: refuse new streams, tell each client to retry after a jittered delay, release claims. */
  async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    this.compaction.stop();
    const { retryMinMs, retryMaxMs } = this.core.config.gateway;
    for (const s of this.registry.all()) s.close(CloseReason.Draining, retryMinMs + Math.random() * (retryMaxMs - retryMinMs));
    await this.ownership.settled();
  }

  async stop(): Promise<void> {
    await this.drain();
    this.keepalives.stop();
    this.silence.stop();
    this.links?.stop();
    this.hub.close();
    this.ownership.stop();
    await this.liveness.stop();
    this.admission.stop();
  }
}
