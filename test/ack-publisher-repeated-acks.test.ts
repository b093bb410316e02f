// A publish goes out once with its own reply subject, so a second acknowledgement for it means the
// store kept it twice (nats-server 2.9 did, in the fault campaign: docs/RELIABILITY.md). The
// publisher reports that, and tells it apart from a late answer to a publish that timed out. The
// stream here is played by a plain subscriber on a real nats-server: JetStream cannot be made to
// store one message twice on purpose.

import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPublisher } from '../services/core/ack-publisher.js';
import type { StoredAck } from '../services/core/jetstream-ack.js';
import { createLogger } from '../services/core/logger.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

const quiet = createLogger({ level: 'silent', pretty: false });

let nats: TestNats;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url, inboxPrefix: '_INBOX.test' });
});

afterAll(async () => {
  await nc.close();
  await nats.stop();
});

/**
 * Answers every publish on `subject` `answers` times, after `delayMs`: stored at seq 1, 2, ... or,
 * with `deduplicated`, the repeats flagged as JetStream flags a message id already stored.
 */
function playStream(subject: string, answers: number, o: { delayMs?: number; deduplicated?: boolean } = {}): void {
  let seq = 0;
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      const reply = msg.reply;
      if (reply === undefined) return;
      setTimeout(() => {
        const first = ++seq;
        nc.publish(reply, JSON.stringify({ stream: 'RELAY', seq: first }));
        for (let i = 1; i < answers; i++) {
          nc.publish(reply, JSON.stringify(o.deduplicated === true ? { stream: 'RELAY', seq: first, duplicate: true } : { stream: 'RELAY', seq: ++seq }));
        }
      }, o.delayMs ?? 0);
    },
  });
}

async function flushed(): Promise<void> {
  // Two round trips: the stream's answers have reached the publisher's subscription once both return.
  await nc.flush();
  await nc.flush();
}

describe('a publish acknowledged twice', () => {
  it('is reported once per extra acknowledgement, with where it was stored again, and the POST still gets the first', async () => {
    playStream('twice.acks', 2);
    const repeats: StoredAck[] = [];
    const acks = new AckPublisher(nc, '_INBOX.test', quiet, (again) => repeats.push(again));
    try {
      const first: StoredAck = await acks.publish('twice.acks', 'one', headers(), 2000);
      const second: StoredAck = await acks.publish('twice.acks', 'two', headers(), 2000);
      await flushed();
      expect([first.seq, second.seq]).toEqual([1, 3]);
      expect(repeats).toEqual([
        { stream: 'RELAY', seq: 2, duplicate: false },
        { stream: 'RELAY', seq: 4, duplicate: false },
      ]);
    } finally {
      acks.close();
    }
  });

  it('says when the duplicate window caught the repeat, so the log holds the entry once', async () => {
    playStream('caught.acks', 2, { deduplicated: true });
    const repeats: StoredAck[] = [];
    const acks = new AckPublisher(nc, '_INBOX.test', quiet, (again) => repeats.push(again));
    try {
      const first = await acks.publish('caught.acks', 'one', headers(), 2000);
      await flushed();
      expect(first).toEqual({ stream: 'RELAY', seq: 1, duplicate: false });
      expect(repeats).toEqual([{ stream: 'RELAY', seq: 1, duplicate: true }]);
    } finally {
      acks.close();
    }
  });

  it('is not reported when every publish is acknowledged once', async () => {
    playStream('once.acks', 1);
    let repeated = 0;
    const acks = new AckPublisher(nc, '_INBOX.test', quiet, () => repeated++);
    try {
      await Promise.all([1, 2, 3].map((i) => acks.publish('once.acks', String(i), headers(), 2000)));
      await flushed();
      expect(repeated).toBe(0);
    } finally {
      acks.close();
    }
  });

  it('is told apart from a late answer to a publish that timed out', async () => {
    playStream('late.acks', 1, { delayMs: 400 });
    let repeated = 0;
    const acks = new AckPublisher(nc, '_INBOX.test', quiet, () => repeated++);
    try {
      await expect(acks.publish('late.acks', 'late', headers(), 100)).rejects.toThrow(/did not acknowledge in time/);
      // The answer comes 400 ms after the publish, after the 100 ms deadline and the sweep; a
      // watcher on every inbox sees it arrive on this connection.
      await new Promise<void>((resolve) => nc.subscribe('_INBOX.test.>', { max: 1, callback: () => resolve() }));
      await flushed();
      expect(repeated).toBe(0);
    } finally {
      acks.close();
    }
  });

  it('a report of a repeated acknowledgement that throws costs that report only: the next publish is still acknowledged', async () => {
    playStream('throwing.acks', 2);
    const warned: string[] = [];
    const logger = { warn: (_fields: object, message: string) => void warned.push(message) } as unknown as typeof quiet;
    const acks = new AckPublisher(nc, '_INBOX.test', logger, () => {
      throw new Error('a metric refused the label');
    });
    try {
      expect((await acks.publish('throwing.acks', 'one', headers(), 2000)).seq).toBe(1);
      await flushed();
      // The repeat of 'one' threw inside the acknowledgements' subscription; 'two' is still heard.
      expect((await acks.publish('throwing.acks', 'two', headers(), 2000)).seq).toBe(3);
      expect(warned).toEqual(['reading a publish acknowledgement failed on a message; the subscription goes on']);
    } finally {
      acks.close();
    }
  });
});
