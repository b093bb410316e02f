// The gateway's own variables (streams: keepalives, queues, resume window, ownership, caps, drain).

import { Type } from '@sinclair/typebox';
import { MIN_RETRY_MS, STREAM_TIMINGS } from '../../../schemas/stream-timings.js';
import { duration, size } from './env-annotations.js';

export const GatewayEnv = {
  KEEPALIVE_INTERVAL: Type.String({
    default: `${STREAM_TIMINGS.keepaliveMs / 1000}s`,
    ...duration,
    description: `Server keepalive pair interval; must stay below the ${STREAM_TIMINGS.watchdogMs / 1000} s clients wait.`,
  }),
  STREAM_QUEUE_MAX_BYTES: Type.String({
    default: '4MiB',
    ...size,
    description: 'Bytes a stream may have waiting for a slow client before it is closed.',
  }),
  META_AUTHORITATIVE_SENDER: Type.Union([Type.Literal('false'), Type.Literal('true')], {
    default: 'false',
    description:
      "true: every meta frame also carries the published proxy client's shape, userAgent and authoritativeSender {id, username} (the session's profile name; null for a bridge's envelope and the relay's keepalives), beside the spec's uuid, agent and channel, which are unchanged. As authoritative as the key that sent the frame: an envelope's id is whatever UUID its bridge named.",
  }),
  RESUME_WINDOW_BYTES: Type.String({
    default: '64MiB',
    ...size,
    description:
      'Recent frames each gateway keeps (all its channels together, oldest out first) to answer a Last-Event-ID resume from memory; older gaps are read from the event log. 0: keep none (a resume at the newest frame still costs no JetStream request).',
  }),
  NODE_TIMEOUT: Type.String({
    default: '15s',
    ...duration,
    description: 'A gateway whose heartbeat is not seen for this long is taken for dead and its stream claims are removed.',
  }),
  MAX_STREAMS_PER_ACCOUNT: Type.Integer({
    default: 8,
    minimum: 0,
    description: 'Streams one account may hold across the mesh (on different channels); 429 too_many_streams beyond. 0: no limit.',
  }),
  MAX_STREAMS_PER_KEY: Type.Integer({
    default: 64,
    minimum: 0,
    description: 'Streams opened without a session (bridge streams) one API key may hold across the mesh; 429 too_many_streams beyond. 0: no limit.',
  }),
  STREAM_OPEN_RATE: Type.Number({
    default: 0.5,
    minimum: 0,
    description:
      'Stream opens per second one account (or a bridge key without a session) may make on this gateway, a token bucket (each open replays what was missed, and reopening replaces the previous stream, so MAX_STREAMS_PER_ACCOUNT never applies); 429 too_many_opens with Retry-After beyond, never a ban. 0 turns the limit off.',
  }),
  STREAM_OPEN_BURST: Type.Integer({
    default: 10,
    minimum: 1,
    description: 'Stream opens one account may make at once before STREAM_OPEN_RATE applies (reconnects with back-off and two copies of one account ping-ponging stay within it).',
  }),
  HEAP_COMPACTION_AFTER_OPENS: Type.Integer({
    default: 1000,
    minimum: 0,
    description:
      'Stream opens within a minute that make a burst: once a burst is over, if it opened at least a quarter of the streams the gateway holds, the gateway compacts its heap once, giving back the memory the burst left behind. The whole process pauses for it, in proportion to its heap (about 0.4 s at 17,000 streams on 2 cores, over a second from about 250 MiB of live heap); at most once a minute. 0: never.',
  }),
  RETRY_MIN: Type.String({ default: `${MIN_RETRY_MS / 1000}s`, ...duration, description: `Shortest retry a draining gateway tells clients; at least ${MIN_RETRY_MS / 1000}s (schemas/stream-timings.ts MIN_RETRY_MS).` }),
  RETRY_MAX: Type.String({ default: '5s', ...duration, description: 'Longest retry: a draining gateway tells clients.' }),
};
