// What the relay asks of JetStream about its event log during a phase: the API requests on stream
// RELAY (seen by a core subscription on $JS.API.>, as the server receives them), the consumers
// among them, and the consumers still on the server at the end.

import { connect } from '@nats-io/transport-node';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import { STREAM_NAME } from '../../services/core/subjects.js';

export interface JsApiCounts {
  requests: number;
  consumersCreated: number;
}

export class JsApiCounter {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly sub: Subscription,
    private readonly counts: JsApiCounts,
  ) {}

  static async start(natsUrl: string): Promise<JsApiCounter> {
    const nc = await connect({ servers: natsUrl, name: 'bench-js-api-count' });
    const counts: JsApiCounts = { requests: 0, consumersCreated: 0 };
    const ofLog = new RegExp(`\\.${STREAM_NAME}(\\.|$)`);
    const sub = nc.subscribe('$JS.API.>', {
      callback: (_err, msg) => {
        if (!ofLog.test(msg.subject)) return;
        counts.requests++;
        if (msg.subject.startsWith(`$JS.API.CONSUMER.CREATE.${STREAM_NAME}`) || msg.subject.startsWith(`$JS.API.CONSUMER.DURABLE.CREATE.${STREAM_NAME}`)) counts.consumersCreated++;
      },
    });
    await nc.flush();
    return new JsApiCounter(nc, sub, counts);
  }

  /** Counts so far (every request sent before this call has been seen once it resolves). */
  async snapshot(): Promise<JsApiCounts> {
    await this.nc.flush();
    return { ...this.counts };
  }

  /** The log's newest sequence (one request, counted like any other: read it before a snapshot). */
  async logLastSeq(): Promise<number> {
    const jsm = await jetstreamManager(this.nc);
    return (await jsm.streams.info(STREAM_NAME)).state.last_seq;
  }

  async consumersLeft(): Promise<number> {
    const jsm = await jetstreamManager(this.nc);
    let n = 0;
    // Every page (the server answers 256 a page).
    for await (const _ of jsm.consumers.list(STREAM_NAME)) n++;
    return n;
  }

  async close(): Promise<void> {
    this.sub.unsubscribe();
    await this.nc.drain();
  }
}
