// Prometheus metrics (prom-client). One RelayMetrics per process: in the all-in-one mode ingress and
// gateway share it, so every name is registered once.
//
// A counter whose label values are known in advance (a catalogue: error codes, close reasons, payload
// types, look-up outcomes) has every series from the start, at 0, so the dashboard and the alerts
// read 0 on a fresh node rather than "no data" (startAtZero). Those whose catalogues this file
// knows start here; the close reasons where the gateway is built, the POST statuses and payload
// types where the ingress is. No label here is unbounded (a channel, an account): such a counter
// would stay lazy, as each of its series would cost every scrape for good.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { HTTP_ERROR_CODES, type HttpErrorCode } from '../../schemas/http-errors.js';
import type { ConnectionRefusal } from './connection-gate.js';
import { LOOKUP_REFUSALS, PROFILE_OUTCOMES, type LookupRefusal, type ProfileOutcome } from './profile.js';

/** Why a meta+data pair was not written to a stream. */
/** `not_republished`: a live message that did not come from the log's RePublish (a consumer aimed at live.channel.>). */
export const FRAME_DROP_REASONS = ['coalesced', 'slow_consumer', 'not_republished'] as const;
/** What answered a resume: the window in memory, or a read of the log. */
/** What became of an entry that reached the log a second time (relay_publish_acks_repeated_total). */
export const REPEATED_ACK_OUTCOMES = ['twice', 'deduplicated'] as const;
export const RESUME_ANSWERS = ['memory', 'log'] as const;

/** A counter whose label `L` takes only the values `V` of a catalogue (checked when compiled). */
type CataloguedCounter<L extends string, V extends string> = Omit<Counter<L>, 'inc'> & { inc(labels: Record<L, V>, value?: number): void };

/** Creates the series of every value of a known label set, at 0. */
export function startAtZero<L extends string, V extends string>(counter: { inc(labels: Record<L, V>, value?: number): void }, label: L, values: readonly V[]): void {
  for (const value of values) counter.inc({ [label]: value } as Record<L, V>, 0);
}

export class RelayMetrics {
  readonly registry = new Registry();
  readonly streamsOpen: Gauge;
  readonly streamsOpened: Counter;
  readonly streamsClosed: Counter<'reason'>;
  readonly framesDelivered: Counter;
  readonly framesDropped: CataloguedCounter<'reason', (typeof FRAME_DROP_REASONS)[number]>;
  readonly deliveryLag: Histogram;
  readonly evictions: Counter;
  readonly claimMessages: Counter;
  readonly ownerCensusUnanswered: Counter;
  readonly gapsFilled: Counter;
  readonly posts: Counter<'outcome'>;
  readonly postsInFlight: Gauge;
  readonly idempotencyUnrecorded: Counter;
  readonly refusals: CataloguedCounter<'code', HttpErrorCode>;
  readonly connectionsRefused: CataloguedCounter<'reason', ConnectionRefusal>;
  readonly entriesPublished: Counter<'type'>;
  readonly publishDuration: Histogram;
  readonly acksRepeated: Counter<'stored'>;
  readonly bansIssued: Counter;
  readonly profileCalls: CataloguedCounter<'outcome', ProfileOutcome>;
  readonly lookupRefusals: CataloguedCounter<'reason', LookupRefusal>;
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
  readonly resumes: CataloguedCounter<'answered', (typeof RESUME_ANSWERS)[number]>;
  readonly resumeLookups: Counter;
  readonly heapCompactions: Histogram;

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
    startAtZero(this.framesDropped, 'reason', FRAME_DROP_REASONS);
    this.deliveryLag = new Histogram({
      name: 'relay_delivery_lag_seconds',
      help: 'Time from ingress publish to the write on the stream socket',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.evictions = new Counter({ name: 'relay_evictions_total', help: 'Streams closed because the account opened another on the same channel', registers });
    this.claimMessages = new Counter({
      name: 'relay_claim_messages_received_total',
      help: 'Claim notices this gateway received: evictions and sweeps of its own claims (it hears nothing else of the claims bucket)',
      registers,
    });
    this.ownerCensusUnanswered = new Counter({
      name: 'relay_owner_census_unanswered_total',
      help: 'Gateways that did not answer in time how many streams an opening stream’s owner holds (counted as none)',
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
    // Every code of the catalogue: the HTTP layer every service shares answers any of them.
    startAtZero(this.refusals, 'code', HTTP_ERROR_CODES);
    this.connectionsRefused = new Counter({
      name: 'relay_connections_refused_total',
      help: 'Connections the client port reset before reading a request, by reason: per_address (the address held MAX_CONNECTIONS_PER_ADDRESS), first_byte_timeout (nothing sent in time)',
      labelNames: ['reason'],
      registers,
    });
    startAtZero(this.connectionsRefused, 'reason', ['per_address', 'first_byte_timeout'] satisfies ConnectionRefusal[]);
    this.entriesPublished = new Counter({ name: 'relay_entries_published_total', help: 'Entries stored in JetStream, by type', labelNames: ['type'], registers });
    this.publishDuration = new Histogram({
      name: 'relay_publish_duration_seconds',
      help: 'Time for JetStream to acknowledge every entry of one POST',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    });
    this.acksRepeated = new Counter({
      name: 'relay_publish_acks_repeated_total',
      help: 'Entries JetStream acknowledged twice though published once (a NATS fault, see docs/RELIABILITY.md), by stored: twice (the log holds the entry twice), deduplicated (its duplicate window caught the repeat)',
      labelNames: ['stored'],
      registers,
    });
    startAtZero(this.acksRepeated, 'stored', REPEATED_ACK_OUTCOMES);
    this.bansIssued = new Counter({ name: 'relay_bans_issued_total', help: 'Accounts banned for cracked clients', registers });
    this.profileCalls = new Counter({
      name: 'relay_profile_api_calls_total',
      help: `Session look-ups by outcome (${PROFILE_OUTCOMES.join(', ')})`,
      labelNames: ['outcome'],
      registers,
    });
    startAtZero(this.profileCalls, 'outcome', PROFILE_OUTCOMES);
    this.lookupRefusals = new Counter({
      name: 'relay_session_lookups_refused_total',
      help: 'Sessions refused without asking the profile API, by reason (401: token_too_long, token_malformed, remembered_invalid; 429, the address over its share: address_busy, address_rate; 503: queue_full, displaced, upstream_backoff, no_time_left)',
      labelNames: ['reason'],
      registers,
    });
    startAtZero(this.lookupRefusals, 'reason', LOOKUP_REFUSALS);
    this.profileDuration = new Histogram({
      name: 'relay_profile_api_duration_seconds',
      help: 'Profile API call latency',
      labelNames: ['outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    // A cached session makes no call, so it has no duration.
    for (const outcome of PROFILE_OUTCOMES) if (outcome !== 'cached') this.profileDuration.zero({ outcome });
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
      help: 'Streams opened with Last-Event-ID, by what answered them: memory (the resume window and the live feed, no consumer) or log (a JetStream read on a consumer)',
      labelNames: ['answered'],
      registers,
    });
    startAtZero(this.resumes, 'answered', RESUME_ANSWERS);
    this.resumeLookups = new Counter({
      name: 'relay_resume_lookups_total',
      help: "JetStream requests a resume made without a consumer: a channel's newest frame (a channel this gateway had heard nothing of), or the log's newest (a client ahead of this gateway)",
      registers,
    });
    this.heapCompactions = new Histogram({
      name: 'relay_heap_compaction_seconds',
      help: 'Compactions of the heap after a burst of stream opens (HEAP_COMPACTION_AFTER_OPENS), by how long each paused the process',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
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
