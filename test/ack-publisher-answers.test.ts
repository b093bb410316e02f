// What a publish by hand makes of each answer the stream (or something posing as it) can give: a
// refusal is "not stored" with JetStream's code, anything unreadable is "unknown" (it may have been
// stored: a resend needs an Idempotency-Key), and no answer is taken for a success or throws
// anything but a PublishError. The stream is played by a plain subscriber on a real nats-server.

import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPublisher } from '../services/core/ack-publisher.js';
import { PublishError } from '../services/core/jetstream-ack.js';
import { createLogger } from '../services/core/logger.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

const quiet = createLogger({ level: 'silent', pretty: false });
let nats: TestNats;
let nc: NatsConnection;
let acks: AckPublisher;

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url, inboxPrefix: '_INBOX.test' });
  acks = new AckPublisher(nc, '_INBOX.test', quiet);
  // Answers each publish with its own payload: the test says what the stream answers.
  nc.subscribe('answers.>', { callback: (_e, m) => void m.respond(m.data) });
  await nc.flush();
});

afterAll(async () => {
  acks.close();
  await nc.close();
  await nats.stop();
});

async function outcome(answer: string): Promise<unknown> {
  return acks.publish('answers.x', answer, headers(), 2000).catch((e: unknown) => e);
}

describe('a publish by hand reads its answer', () => {
  it('a refusal: not stored, with JetStream’s code', async () => {
    const e = await outcome('{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"}}');
    expect(e).toBeInstanceOf(PublishError);
    expect(e).toMatchObject({ outcome: 'not_stored', apiCode: 10071, message: 'wrong last sequence: 3' });
  });

  it('a refusal with no code or description: not stored, said plainly', async () => {
    expect(await outcome('{"error":{}}')).toMatchObject({ outcome: 'not_stored', apiCode: undefined, message: 'refused by JetStream' });
    expect(await outcome('{"error":{"err_code":"10071","description":5}}')).toMatchObject({ outcome: 'not_stored', apiCode: undefined, message: 'refused by JetStream' });
  });

  it.each(['null', '5', '"stored"', '[]', '{"error":null}', '{"stream":"RELAY"}', '{"stream":"RELAY","seq":"4"}', '{"stream":7,"seq":4}', 'not json'])(
    'an answer that says neither (%s): unknown, never a success',
    async (answer) => {
      const e = await outcome(answer);
      expect(e).toBeInstanceOf(PublishError);
      expect((e as PublishError).outcome).toBe('unknown');
    },
  );

  it('an acknowledgement: where it was stored', async () => {
    expect(await outcome('{"stream":"RELAY","seq":4}')).toEqual({ stream: 'RELAY', seq: 4, duplicate: false });
    expect(await outcome('{"stream":"RELAY","seq":4,"duplicate":true}')).toEqual({ stream: 'RELAY', seq: 4, duplicate: true });
  });
});
