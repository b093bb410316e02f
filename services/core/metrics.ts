// Prometheus metrics (prom-client). One RelayMetrics per process: in the all-in-one mode ingress and
// gateway share it, so every name is registered once.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export class RelayMetrics {
  readonly registry = new Registry();
  readonly streamsOpen: Gauge;
  readonly streamsOpened: Counter;
  readonly streamsClosed: Counter<'reason'>;
  readonly framesDelivered: Counter;
  readonly framesDropped: Counter<'reason'>;
  readonly deliveryLag: Histogram;
  readonly evictions: Counter;
  readonly claimMessages: Counter;
  readonly gapsFilled: Counter;
  readonly posts: Counter<'outcome'>;
  readonly postsInFlight: Gauge;
  readonly idempotencyUnrecorded: Counter;
  readonly refusals: Counter<'code'>;
  readonly entriesPublished: Counter<'type'>;
  readonly publishDuration: Histogram;
  readonly bansIssued: Counter;
  readonly profileCalls: Counter<'outcome'>;
  readonly lookupRefusals: Counter<'reason'>;
  readonly profileDuration: Histogram<'outcome'>;
  readonly natsConnected: Gauge;
  readonly channelSubscriptions: Gauge;
  readonly replaysBeyondRetention: Counter;
  readonly ready: Gauge<'service'>;
  readonly renewalOverdue: Gauge;
  readonly lookupsWaiting: Gauge;
  /** Read at every scrape from whoever knows (the server, the gateway's ownership); unset, no sample. */
  private waiting: (() => number) | null = null;
  private readiness: { service: string; check: () => boolean } | null = null;
  private overdueMs: (() => number) | null = null;
  readonly resumeWindowBytes: Gauge;
  readonly resumes: Counter<'answered'>;
  readonly resumeLookups: Counter;

  constructor(nodeId: string) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ node: nodeId });
    collectDefaultMetrics({ register: this.registry });
    this.streamsOpen = new Gauge({ name: 'relay_streams_open', help: 'SSE streams open on this node', registers });
    this.streamsOpened = new Counter({ name: 'relay_streams_opened_total', help: 'SSE streams opened', registers });
    this.streamsClosed = new Counter({
      name: 'relay_streams_closed_total',
      help: 'SSE streams closed, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.framesDelivered = new Counter({ name: 'relay_frames_delivered_total', help: 'meta+data pairs written to streams', registers });
    this.framesDropped = new Counter({
      name: 'relay_frames_dropped_total',
      help: 'pairs not written: coalesced presence snapshots or streams closed as slow consumers',
      labelNames: ['reason'],
      registers,
    });
    this.deliveryLag = new Histogram({
      name: 'relay_delivery_lag_seconds',
      help: 'Time from ingress publish to the write on the stream socket',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.evictions = new Counter({ name: 'relay_evictions_total', help: 'Streams closed because the account opened another on the same channel', registers });
    this.claimMessages = new Counter({
      name: 'relay_claim_messages_received_total',
      help: 'Claim writes and eviction notices this gateway received (the claims of its own accounts, not the mesh)',
      registers,
    });
    this.gapsFilled = new Counter({ name: 'relay_live_gaps_filled_total', help: 'Frames missing from the live feed, fetched from the stream', registers });
    this.posts = new Counter({ name: 'relay_posts_total', help: 'POST requests by outcome (status code)', labelNames: ['outcome'], registers });
    this.postsInFlight = new Gauge({
      name: 'relay_posts_in_flight',
      help: 'POSTs begun and not yet answered (a drain waits for these before the process exits)',
      registers,
    });
    this.idempotencyUnrecorded = new Counter({
      name: 'relay_idempotency_unrecorded_total',
      help: 'Answers to Idempotency-Key requests that were stored but could not be recorded (a resend of one runs again)',
      registers,
    });
    this.refusals = new Counter({
      name: 'relay_refusals_total',
      help: 'Requests refused (GET and POST), by error code: every limit counts its refusals here',
      labelNames: ['code'],
      registers,
    });
    this.entriesPublished = new Counter({ name: 'relay_entries_published_total', help: 'Entries stored in JetStream, by type', labelNames: ['type'], registers });
    this.publishDuration = new Histogram({
      name: 'relay_publish_duration_seconds',
      help: 'Time for JetStream to acknowledge every entry of one POST',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    this.bansIssued = new Counter({ name: 'relay_bans_issued_total', help: 'Accounts banned for cracked clients', registers });
    this.profileCalls = new Counter({
      name: 'relay_profile_api_calls_total',
      help: 'Session look-ups by outcome (cached, valid, invalid, unavailable)',
      labelNames: ['outcome'],
      registers,
    });
    this.lookupRefusals = new Counter({
      name: 'relay_session_lookups_refused_total',
      help: 'Sessions refused without asking the profile API, by reason (token_too_long, token_malformed, remembered_invalid, address_busy, queue_full, displaced, address_rate, upstream_backoff, no_time_left)',
      labelNames: ['reason'],
      registers,
    });
    this.profileDuration = new Histogram({
      name: 'relay_profile_api_duration_seconds',
      help: 'Profile API call latency',
      labelNames: ['outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.natsConnected = new Gauge({ name: 'relay_nats_connected', help: '1 while the NATS connection is up', registers });
    this.channelSubscriptions = new Gauge({
      name: 'relay_channel_subscriptions',
      help: 'Core NATS subscriptions held by this gateway (one per channel with local streams)',
      registers,
    });
    this.replaysBeyondRetention = new Counter({
      name: 'relay_replays_beyond_retention_total',
      help: 'Resumes (Last-Event-ID) that asked for frames the log no longer keeps',
      registers,
    });
    this.ready = new Gauge({
      name: 'relay_ready',
      help: '1 while this process would answer /readyz ready (NATS connected, the event log and its buckets led, JetStream led for a gateway, not draining; evaluated every 5 s), by service (gateway, ingress, all)',
      labelNames: ['service'],
      registers,
      collect: () => {
        const r = this.readiness;
        if (r !== null) this.ready.set({ service: r.service }, r.check() ? 1 : 0);
      },
    });
    this.lookupsWaiting = new Gauge({
      name: 'relay_session_lookups_waiting',
      help: 'Session look-ups waiting for a free place (PROFILE_API_MAX_QUEUE bounds them)',
      registers,
      collect: () => {
        if (this.waiting !== null) this.lookupsWaiting.set(this.waiting());
      },
    });
    this.renewalOverdue = new Gauge({
      name: 'relay_ownership_renewal_overdue_seconds',
      help: 'How far this gateway\'s most overdue stream claim is past its renewal (0 while renewals keep up)',
      registers,
      collect: () => {
        if (this.overdueMs !== null) this.renewalOverdue.set(this.overdueMs() / 1000);
      },
    });
    this.resumeWindowBytes = new Gauge({ name: 'relay_resume_window_bytes', help: 'Bytes of recent frames kept to answer resumes from memory (RESUME_WINDOW_BYTES)', registers });
    this.resumes = new Counter({
      name: 'relay_resumes_total',
      help: 'Streams opened with Last-Event-ID, by what answered them: memory (the resume window, no JetStream request) or log (a JetStream read)',
      labelNames: ['answered'],
      registers,
    });
    this.resumeLookups = new Counter({
      name: 'relay_resume_lookups_total',
      help: "Look-ups of a channel's newest frame (one JetStream request, no consumer) for a resume on a channel this gateway had heard nothing of",
      registers,
    });
  }

  /** What `relay_session_lookups_waiting` reports at each scrape. */
  observeLookupsWaiting(waiting: () => number): void {
    this.waiting = waiting;
  }

  /** What `relay_ready` reports at each scrape. */
  observeReadiness(service: string, check: () => boolean): void {
    this.readiness = { service, check };
  }

  /** What `relay_ownership_renewal_overdue_seconds` reports at each scrape. */
  observeRenewalOverdue(overdueMs: () => number): void {
    this.overdueMs = overdueMs;
  }
}
