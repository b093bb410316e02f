// What JetStream answers a publish: where it stored the message, or why not; read the same way
// wherever the relay publishes by hand (ack-publisher.ts, kv-internals.ts).

import type { Msg } from '@nats-io/nats-core';

export interface StoredAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * `not_stored`: JetStream (or the client) said no, so the message is not in the log. `unknown`: no
 * answer came in time, or one that cannot be read, and the message may or may not have been stored.
 */
export type PublishOutcome = 'not_stored' | 'unknown';

export class PublishError extends Error {
  readonly outcome: PublishOutcome;
  /** JetStream's own code for a refusal (`err_code`, jetstream-errors.ts reads it), when it gave one. */
  readonly apiCode: number | undefined;
  constructor(message: string, outcome: PublishOutcome = 'not_stored', apiCode?: number) {
    super(message);
    this.name = 'PublishError';
    this.outcome = outcome;
    this.apiCode = apiCode;
  }
}

interface AckBody {
  stream?: unknown;
  seq?: unknown;
  duplicate?: unknown;
  error?: { description?: unknown; err_code?: unknown } | null;
}

/** The answer to a publish: the acknowledgement, or the PublishError it amounts to (never throws). */
export function readAck(msg: Msg): StoredAck | PublishError {
  if (msg.headers?.code === 503 || msg.data.length === 0) return new PublishError('no JetStream responder (the stream has no leader right now)');
  let body: AckBody;
  try {
    body = msg.json<AckBody>();
  } catch {
    return new PublishError('unreadable acknowledgement', 'unknown');
  }
  if (typeof body !== 'object' || body === null) return new PublishError('invalid acknowledgement', 'unknown');
  const { error } = body;
  if (typeof error === 'object' && error !== null) {
    const description = typeof error.description === 'string' ? error.description : 'refused by JetStream';
    return new PublishError(description, 'not_stored', typeof error.err_code === 'number' ? error.err_code : undefined);
  }
  if (typeof body.stream !== 'string' || typeof body.seq !== 'number') return new PublishError('invalid acknowledgement', 'unknown');
  return { stream: body.stream, seq: body.seq, duplicate: body.duplicate === true };
}
