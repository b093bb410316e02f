// The hand-written requests the hot paths use (the ingress's publishes, a gateway's claims), over a
// real nats-server with plain subscribers as responders: each answer reaches its own request and no
// other spelling of its reply subject does, an unanswered request fails at its deadline, and nothing
// waits past a close (of the replies, or of the connection) or goes out after it.

import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../services/core/logger.js';
import { NatsReplies, ReplyMissing } from '../services/core/nats-replies.js';
import { startTestNats, type TestNats } from './helpers/nats.js';

const quiet = createLogger({ level: 'silent', pretty: false });
const INBOX = '_INBOX.test';

let nats: TestNats;
let nc: NatsConnection;
let n = 0;

beforeAll(async () => {
  nats = await startTestNats();
  nc = await connect({ servers: nats.url, inboxPrefix: INBOX });
});

afterAll(async () => {
  await nc.close();
  await nats.stop();
});

/** A responder on a fresh subject: `answer` decides what each request gets (nothing: no answer). */
async function responder(answer: (m: Msg) => void): Promise<{ subject: string; heard: Msg[] }> {
  const subject = `replies.test.${++n}`;
  const heard: Msg[] = [];
  nc.subscribe(subject, { callback: (_e, m) => void (heard.push(m), answer(m)) });
  await nc.flush();
  return { subject, heard };
}

const missing = (code: string): unknown => expect.objectContaining({ name: 'ReplyMissing', code }) as unknown;

describe('requests by hand over NATS', () => {
  it('gives each of many requests made at once its own answer', async () => {
    const { subject } = await responder((m) => m.respond(`answer to ${m.string()}`));
    const replies = new NatsReplies(nc, INBOX, quiet, 'test answers');
    try {
      const asked = Array.from({ length: 300 }, (_x, i) => `q${i}`);
      const answers = await Promise.all(asked.map((q) => replies.request(subject, q, undefined, 2000)));
      expect(answers.map((m) => m.string())).toEqual(asked.map((q) => `answer to ${q}`));
    } finally {
      replies.close();
    }
  });

  it('takes no other spelling of a reply subject for it: 0x1, 01, 1e0 and +1 do not answer request 1', async () => {
    let first = true;
    const { subject } = await responder((m) => {
      if (first) return void (first = false); // request 0 goes unanswered
      const base = (m.reply ?? '').replace(/\.\d+$/, '.');
      for (const alias of ['0x1', '01', '1e0', '+1']) nc.publish(base + alias, 'forged');
      void nc.flush().then(() => m.respond('real'));
    });
    const repeated: string[] = [];
    const replies = new NatsReplies(nc, INBOX, quiet, 'test answers', (m) => repeated.push(m.string()));
    try {
      const zero = replies.request(subject, 'a', undefined, 300);
      expect((await replies.request(subject, 'b', undefined, 2000)).string()).toBe('real');
      await expect(zero).rejects.toEqual(missing('timeout'));
      expect(repeated).toEqual([]);
    } finally {
      replies.close();
    }
  });

  it('fails a request nobody answers at its deadline, and drops the answer that comes later', async () => {
    const held: Msg[] = [];
    const { subject } = await responder((m) => held.push(m));
    const repeated: Msg[] = [];
    const replies = new NatsReplies(nc, INBOX, quiet, 'test answers', (m) => repeated.push(m));
    try {
      const started = performance.now();
      await expect(replies.request(subject, 'x', undefined, 200)).rejects.toEqual(missing('timeout'));
      expect(performance.now() - started).toBeGreaterThanOrEqual(190);
      held[0]?.respond('too late');
      // A second request round-trips after the late answer reached the subscription.
      const { subject: echo } = await responder((m) => m.respond('ok'));
      expect((await replies.request(echo, 'y', undefined, 2000)).string()).toBe('ok');
      expect(repeated).toEqual([]);
    } finally {
      replies.close();
    }
  });

  it('on close, fails what waits for an answer, and never sends what was not sent yet', async () => {
    const { subject, heard } = await responder(() => undefined);
    const replies = new NatsReplies(nc, INBOX, quiet, 'test answers');
    const sent = replies.request(subject, 'sent', undefined, 10_000);
    await new Promise((resolve) => setImmediate(resolve)); // the turn's requests go out
    await nc.flush();
    const unsent = replies.request(subject, 'unsent', undefined, 10_000);
    replies.close();
    await expect(sent).rejects.toEqual(missing('closed'));
    await expect(unsent).rejects.toEqual(missing('not_sent'));
    await expect(replies.request(subject, 'after', undefined, 10_000)).rejects.toEqual(missing('not_sent'));
    await nc.flush();
    expect(heard.map((m) => m.string())).toEqual(['sent']);
  });

  it('fails what waits at once when the connection closes, not at its deadline', async () => {
    const own = await connect({ servers: nats.url, inboxPrefix: INBOX });
    const subject = `replies.test.${++n}`;
    own.subscribe(subject, { callback: () => undefined });
    const replies = new NatsReplies(own, INBOX, quiet, 'test answers');
    const waiting = replies.request(subject, 'x', undefined, 60_000);
    await new Promise((resolve) => setImmediate(resolve));
    await own.flush();
    await own.close();
    const err: unknown = await waiting.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplyMissing);
    expect((err as ReplyMissing).code).toBe('closed');
  });
});
