// Publishing to JetStream and awaiting the stream's acknowledgement, over the hand-written requests
// of nats-replies.ts (js.publish() costs a request object, a timer and an Error per message): the
// ingress's entries, its hot path.

import type { Msg, MsgHdrs, NatsConnection } from '@nats-io/nats-core';
import { PublishError, readAck, type StoredAck } from './jetstream-ack.js';
import type { Logger } from './logger.js';
import { NatsReplies, ReplyMissing } from './nats-replies.js';

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
