// The names of the attributes on the relay's spans, written once for the ingress (the POST and
// publish spans) and the gateway (deliver and replay). OpenTelemetry's stable names are imported
// from @opentelemetry/semantic-conventions where they are used; its messaging names are exported only
// from the package's `incubating` entry, which may change between releases, so they are named here.

export const SpanAttr = {
  MessagingSystem: 'messaging.system',
  MessagingOperationType: 'messaging.operation.type',
  MessagingDestinationName: 'messaging.destination.name',

  /** The channel (readable name; `*` for a bridge's stream on every channel). */
  Channel: 'relay.channel',
  /** A POST's entries. */
  Entries: 'relay.entries',
  /** A stored entry's payload type. */
  Type: 'relay.type',
  /** A stored entry's sequence in the event log. */
  Sequence: 'relay.sequence',

  /** Deliver: streams the frame was queued for (coalesced ones included). */
  StreamsHeard: 'relay.streams.heard',
  /** Deliver: streams of the channel the delivery rules kept it from (scopes, DM addressing). */
  StreamsFiltered: 'relay.streams.filtered',
  /** Deliver: streams where it replaced an older waiting presence snapshot of the same sender. */
  StreamsCoalesced: 'relay.streams.coalesced',
  /** Deliver: streams it pushed past STREAM_QUEUE_MAX_BYTES: closed as slow consumers, the frame not sent. */
  StreamsDropped: 'relay.streams.dropped_slow',
  /** Deliver: streams that had it already (a resume replay sent it) or had just ended. */
  StreamsSkipped: 'relay.streams.skipped',

  /** Replay: the client's Last-Event-ID. */
  ResumeLastEventId: 'relay.resume.last_event_id',
  /** Replay: where the answer came from (memory, log) or that the client left. */
  ResumeAnswered: 'relay.resume.answered',
  ReplayFrames: 'relay.replay.frames',
  ReplayFirstSequence: 'relay.replay.first_sequence',
  ReplayLastSequence: 'relay.replay.last_sequence',
  /** Replay: links to the traces of the stored entries it sent again. */
  ReplayLinks: 'relay.replay.links',
} as const;

/** The messaging attributes of a span about a NATS message: the system, and what the span does with it. */
export function natsMessaging(operation: 'send' | 'process'): Record<string, string> {
  return { [SpanAttr.MessagingSystem]: 'nats', [SpanAttr.MessagingOperationType]: operation };
}
