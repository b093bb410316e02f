// What every channel group of a gateway shares (channel-group.ts): one object for all rather than
// fields on each.

import type { JetStreamManager } from '@nats-io/jetstream';
import type { Tracer } from '@opentelemetry/api';
import type { MetaShape } from '../../../schemas/meta.js';
import type { Logger, ThrottledWarnings } from '../../core/logger.js';
import type { RelayMetrics } from '../../core/metrics.js';
import type { TurnFlusher } from '../stream/turn-flusher.js';
import type { HeardLogs } from './heard-logs.js';
import type { LiveHold } from './live-hold.js';
import type { ResumeWindows } from './resume-window.js';

export interface GroupContext {
  /** Reads the log by message gets: a gateway may not create consumers (core/log-walk.ts). */
  readonly jsm: JetStreamManager;
  readonly logger: Logger;
  readonly warnings: ThrottledWarnings;
  readonly metrics: RelayMetrics;
  readonly windows: ResumeWindows;
  readonly flusher: TurnFlusher;
  /** Null while tracing is off. */
  readonly tracer: Tracer | null;
  readonly metaShape: MetaShape;
  /** While held, live messages wait (live-hold.ts). */
  readonly hold: LiveHold;
  readonly logs: HeardLogs;
}
