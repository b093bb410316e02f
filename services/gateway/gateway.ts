// The gateway service: GET / and /irc open an SSE stream. Authenticate, claim (account, channel),
// join the channel's local fan-out group, replay from Last-Event-ID if asked, then deliver live.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CloseReasonCode } from '../../schemas/close.js';
import { NIL_UUID } from '../../schemas/uuid.js';
import { ErrorCode, isRelayError, RelayError } from '../core/errors.js';
import { atDeadline, type DeadlineTimer } from '../core/deadline-timer.js';
import { writeError } from '../core/http.js';
import type { RelayCore } from '../core/runtime.js';
import { RELAY_AGENT } from '../core/version.js';
import { Admission } from './admission.js';
import { ALL_CHANNELS, ChannelHub } from './channel-hub.js';
import { ClientStream, type StreamOwner } from './client-stream.js';
import { closeFrames, CloseReason } from './close-reason.js';
import { keepaliveFrame } from './frame.js';
import { IndexMap } from './index-map.js';
import { NodeLiveness } from './node-liveness.js';
import { Ownership, streamClaimKey, streamOwner } from './ownership.js';
import { replay } from './replay.js';
import { encodeComment, encodeRetry, SSE_HEADERS } from './sse.js';

const CLIENT_RETRY_MS = 2000;
/** Retry-After on too_many_streams: streams close and free a place at any time. */
const TOO_MANY_RETRY_SECONDS = 10;
const CATCH_UP_AGAIN_MS = 2000;

export class Gateway implements StreamOwner {
  readonly hub: ChannelHub;
  readonly ownership: Ownership;
  readonly liveness: NodeLiveness;
  private readonly core: RelayCore;
  private readonly admission: Admission;
  private readonly streams = new Set<ClientStream>();
  private readonly byAccount = new IndexMap<ClientStream>();
  private readonly byKey = new IndexMap<ClientStream>();
  /** By what each stream counts against for the stream caps (account, or key for sessionless streams). */
  private readonly byOwner = new IndexMap<ClientStream>();
  private readonly expiryTimers = new Map<ClientStream, DeadlineTimer>();
  private readonly releases = new Set<Promise<void>>();
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private draining = false;

  constructor(core: RelayCore) {
    this.core = core;
    const { nats, logger, metrics, config } = core;
    this.hub = new ChannelHub(nats.nc, nats.js, logger, metrics);
    this.liveness = new NodeLiveness(nats.js, nats.buckets.nodes, config.nodeId, 'gateway', config.gateway.nodeTimeoutMs, logger);
    this.admission = new Admission({ auth: core.auth, logger, draining: () => this.draining });
    this.ownership = new Ownership({
      js: nats.js,
      kv: nats.buckets.streams,
      nodeId: config.nodeId,
      logger,
      liveness: this.liveness,
      onEvict: (s) => {
        metrics.evictions.inc();
        s.close(CloseReason.Evicted);
      },
    });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  async start(): Promise<void> {
    const { bans, keys, nats, config, logger } = this.core;
    await this.liveness.start();
    await this.ownership.start(config.claimTtlMs, config.gateway.nodeTimeoutMs);
    bans.mirror.on('put', (uuid) => {
      if (bans.activeBan(uuid) !== undefined) this.closeAll(this.byAccount.get(uuid), CloseReason.Banned);
    });
    keys.mirror.on('put', (clientId, key) => {
      if (key.revokedAt !== undefined) this.closeAll(this.byKey.get(clientId), CloseReason.KeyRevoked);
      else if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= Date.now()) {
        this.closeAll(this.byKey.get(clientId), CloseReason.KeyExpired);
      } else {
        // The expiry changed (set, moved or lifted): the open streams follow the key as it is now.
        for (const s of this.byKey.get(clientId)) this.armKeyExpiry(s, key.expiresAt);
      }
    });
    keys.mirror.on('delete', (clientId) => this.closeAll(this.byKey.get(clientId), CloseReason.KeyRevoked));
    this.keepaliveTimer = setInterval(() => this.sendKeepalives(), config.gateway.keepaliveMs);
    void (async () => {
      for await (const s of nats.nc.status()) {
        if (s.type === 'reconnect') {
          logger.info('resubscribed after reconnect; reading what the live feed missed');
          void this.hub.catchUp();
          // Interest in the renewed subscriptions reaches the stream leader across the cluster a
          // moment later; a second look catches frames republished in between.
          setTimeout(() => void this.hub.catchUp(), CATCH_UP_AGAIN_MS).unref();
        }
      }
    })();
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
    const onClose = (): void => left.abort();
    res.once('close', onClose);
    this.open(req, res, reqId, left.signal)
      .catch((err: unknown) => this.refuse(req, res, reqId, err))
      .finally(() => res.off('close', onClose));
  }

  private refuse(req: IncomingMessage, res: ServerResponse, reqId: string, err: unknown): void {
    const { logger } = this.core;
    const error = isRelayError(err) ? err : new RelayError(500, ErrorCode.Internal, 'The relay failed to open this stream.', { cause: err });
    this.core.metrics.refusals.inc({ code: error.code });
    if (error.code === ErrorCode.Internal) logger.error({ err, reqId, url: req.url, headers: req.headers }, 'stream request failed');
    else logger.debug({ reqId, method: req.method, url: req.url, status: error.status, code: error.code, headers: req.headers }, 'refused');
    writeError(res, error);
  }

  private closeAll(streams: ClientStream[], reason: CloseReasonCode): void {
    for (const s of streams) s.close(reason);
  }

  private sendKeepalives(): void {
    for (const key of this.hub.groupKeys()) {
      this.hub.broadcast(key, keepaliveFrame(RELAY_AGENT, key === ALL_CHANNELS ? ALL_CHANNELS : key, NIL_UUID));
    }
  }

  private async open(req: IncomingMessage, res: ServerResponse, reqId: string, left: AbortSignal): Promise<void> {
    const { config, metrics, logger, nats } = this.core;
    const request = await this.admission.admit(req, reqId, left);
    if (request === null) return;
    const { identity, lastEventId } = request;
    this.checkStreamCaps(identity);
    // From here the stream owns the connection: its end, whenever it comes, undoes all of this.
    const stream = new ClientStream(identity, res, this.hub, config.gateway.queueMaxBytes, this);
    if (stream.closed) return;
    this.streams.add(stream);
    if (stream.account !== null) this.byAccount.add(stream.account, stream);
    this.byKey.add(stream.clientId, stream);
    this.byOwner.add(streamOwner(stream), stream);
    metrics.streamsOpen.set(this.streams.size);
    metrics.streamsOpened.inc();
    this.armKeyExpiry(stream, request.keyExpiresAt);

    try {
      await this.ownership.claim(stream);
    } catch (err) {
      stream.close(CloseReason.Error);
      throw new RelayError(503, ErrorCode.Unavailable, 'Could not register the stream; try again shortly.', { retryAfter: 1, cause: err });
    }
    // The body is delimited by the connection's end (Connection: close), not chunked: each write
    // goes to the socket as it is, with no chunk framing around it.
    res.useChunkedEncodingByDefault = false;
    if (stream.closed) {
      // Closed before it opened: evicted by a later claim, banned, revoked or drained meanwhile.
      const reason = stream.closeReason ?? CloseReason.Error;
      if (!res.destroyed && reason !== CloseReason.ClientClosed) {
        res.writeHead(200, SSE_HEADERS);
        res.end(closeFrames(reason));
      }
      return;
    }
    res.socket?.setNoDelay(true);
    res.writeHead(200, SSE_HEADERS);
    res.write(encodeRetry(CLIENT_RETRY_MS));

    if (lastEventId !== null) stream.startHolding();
    try {
      await this.hub.join(stream);
    } catch (err) {
      // The head is out: the stream ends with its close frames rather than staying half-open.
      logger.warn({ err, reqId }, 'could not subscribe a new stream to its channel');
      stream.close(CloseReason.Error);
      return;
    }
    if (stream.closed) return;
    // Sent once the node is subscribed: from here on nothing published to the channel is missed.
    stream.writeRaw(encodeComment(`connected to ${stream.channel ?? 'every channel'}`));
    if (lastEventId !== null) await replay(nats.js, logger, stream, lastEventId);
  }

  /**
   * MAX_STREAMS_PER_ACCOUNT and MAX_STREAMS_PER_KEY, counted across the mesh: the claims other nodes
   * hold (from the ownership bucket) plus this node's own streams, opening ones included, so a burst
   * of opens on one node cannot slip past while its claims are being written.
   */
  private checkStreamCaps(s: { id: string; account: string | null; clientId: string; channel: string | null }): void {
    const { maxStreamsPerAccount, maxStreamsPerKey } = this.core.config.gateway;
    const limit = s.account !== null ? maxStreamsPerAccount : maxStreamsPerKey;
    if (limit === 0) return;
    const owner = streamOwner(s);
    const key = streamClaimKey(s);
    const local = this.byOwner.get(owner);
    // A stream on a channel the account already holds replaces that one (eviction): it adds nothing.
    const replacing = s.account !== null && s.channel !== null && (this.ownership.heldElsewhere(key) || local.some((x) => x.channel === s.channel));
    const held = this.ownership.remoteStreams(owner) + local.length - (replacing ? 1 : 0);
    if (held < limit) return;
    const whose = s.account !== null ? 'This account' : 'This API key (without a session)';
    throw new RelayError(429, ErrorCode.TooManyStreams, `${whose} already holds ${held} streams across the mesh, the most allowed; close one first.`, {
      retryAfter: TOO_MANY_RETRY_SECONDS,
      extra: { limit },
    });
  }

  /** Closes the stream when its key expires, however far away that is. */
  private armKeyExpiry(stream: ClientStream, expiresAt: string | undefined): void {
    this.expiryTimers.get(stream)?.cancel();
    this.expiryTimers.delete(stream);
    if (expiresAt === undefined) return;
    this.expiryTimers.set(stream, atDeadline(Date.parse(expiresAt), () => stream.close(CloseReason.KeyExpired)));
  }

  streamClosed(stream: ClientStream, reason: CloseReason): void {
    const { metrics } = this.core;
    this.streams.delete(stream);
    if (stream.account !== null) this.byAccount.delete(stream.account, stream);
    this.byKey.delete(stream.clientId, stream);
    this.byOwner.delete(streamOwner(stream), stream);
    this.expiryTimers.get(stream)?.cancel();
    this.expiryTimers.delete(stream);
    this.hub.leave(stream);
    const release = this.ownership.release(stream).finally(() => this.releases.delete(release));
    this.releases.add(release);
    metrics.streamsOpen.set(this.streams.size);
    metrics.streamsClosed.inc({ reason });
    if (reason === CloseReason.SlowConsumer) metrics.framesDropped.inc({ reason: 'slow_consumer' });
  }

  /** Graceful drain: refuse new streams, tell each client to retry after a jittered delay, release claims. */
  async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    const { retryMinMs, retryMaxMs } = this.core.config.gateway;
    for (const s of [...this.streams]) s.close(CloseReason.Draining, retryMinMs + Math.random() * (retryMaxMs - retryMinMs));
    await Promise.all([...this.releases]);
  }

  async stop(): Promise<void> {
    await this.drain();
    if (this.keepaliveTimer !== undefined) clearInterval(this.keepaliveTimer);
    this.hub.close();
    await this.ownership.stop();
    await this.liveness.stop();
  }
}
