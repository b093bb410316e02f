// Publishing to JetStream and awaiting the stream's acknowledgement, over the hand-written requests
// of nats-replies.ts (js.publish() costs a request object, a timer and an Error per message). Used
// where publishes are the hot path: the ingress's entries, a gateway's claim writes.

import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import type { Logger } from './logger.js';
import { NatsReplies, ReplyMissing } from './nats-replies.js';

export interface StoredAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

/**
 * `not_stored`: JetStream (or the client) said no, so the message is not in the log. `unknown`: no
 * answer came in time, and the message may or may not have been stored.
 */
export type PublishOutcome = 'not_stored' | 'unknown';

export class PublishError extends Error {
  readonly outcome: PublishOutcome;
  /** JetStream's own code for a refusal (`err_code`: 10071, the expected revision was not the key's), when it gave one. */
  readonly apiCode: number | undefined;
  constructor(message: string, outcome: PublishOutcome = 'not_stored', apiCode?: number) {
    super(message);
    this.name = 'PublishError';
    this.outcome = outcome;
    this.apiCode = apiCode;
  }
}

/** What JetStream answered a publish: where it stored it, or why not. */
export function readAck(msg: Msg): StoredAck | PublishError {
  if (msg.headers?.code === 503 || msg.data.length === 0) return new PublishError('no JetStream responder (the stream has no leader right now)');
  let body: { stream?: string; seq?: number; duplicate?: boolean; error?: { description?: string; err_code?: number } };
  try {
    body = msg.json();
  } catch {
    return new PublishError('unreadable acknowledgement', 'unknown');
  }
  if (body.error !== undefined) return new PublishError(body.error.description ?? 'refused by JetStream', 'not_stored', body.error.err_code);
  if (body.stream === undefined || body.seq === undefined) return new PublishError('invalid acknowledgement', 'unknown');
  return { stream: body.stream, seq: body.seq, duplicate: body.duplicate === true };
}

export class AckPublisher {
  private readonly replies: NatsReplies;

  /**
   * `inbox`: the connection's inbox prefix, the only one its role may subscribe under.
   * `onRepeatedAck`: called with the second answer to a publish already answered. Each publish goes
   * out once with its own reply subject, so a second answer means the message reached the stream
   * twice: stored again, or caught by the duplicate window (`duplicate`, with a Nats-Msg-Id only).
   */
  constructor(nc: NatsConnection, inbox: string, logger: Pick<Logger, 'warn'>, onRepeatedAck: (again: StoredAck) => void = () => undefined) {
    this.replies = new NatsReplies(nc, inbox, logger, 'reading a publish acknowledgement', (msg) => {
      const ack = readAck(msg);
      if (!(ack instanceof PublishError)) onRepeatedAck(ack);
    });
  }

  /** Resolves once the stream has stored the message; rejects on refusal or after `timeoutMs`. */
  async publish(subject: string, data: string | Uint8Array, headers: MsgHdrs, timeoutMs: number): Promise<StoredAck> {
    let msg: Msg;
    try {
      msg = await this.replies.request(subject, data, headers, timeoutMs);
    } catch (e) {
      if (!(e instanceof ReplyMissing)) throw e;
      throw new PublishError(e.code === 'timeout' ? 'the event log did not acknowledge in time' : 'publisher closed before the acknowledgement', 'unknown');
    }
    const ack = readAck(msg);
    if (ack instanceof PublishError) throw ack;
    return ack;
  }

  close(): void {
    this.replies.close();
  }
}
