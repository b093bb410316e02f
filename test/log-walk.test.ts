// The consumer-less log reader (core/log-walk.ts) over a real nats-server after `relay setup`: it
// reads exactly a range of one channel among others, in order, to the end when no end is given,
// steps over deleted messages, stops when told, reads the whole log a window of gets at a time, and
// never asks JetStream for a consumer.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { LogStalledError } from '../services/core/log-reader.js';
import { walkLog, type LogWalk, type WalkedMsg } from '../services/core/log-walk.js';
import { channelSubject, STREAM_NAME, STREAM_SUBJECTS } from '../services/core/subjects.js';
import { startTestNats, type TestNats } from './helpers/nats.js';
import { setUpNats } from './helpers/nats-setup.js';

let nats: TestNats;
let nc: NatsConnection;
let js: JetStreamClient;
let jsm: JetStreamManager;
/** Every JetStream API request about consumers made while the file runs (there must be none). */
let consumerRequests: string[];
let consumerWatch: Subscription;
let n = 0;
const channel = (): string => `walk-${++n}.example.net`;
const text = new TextDecoder();

beforeAll(async () => {
  nats = await startTestNats();
  await setUpNats(nats.url);
  nc = await connect({ servers: nats.url });
  js = jetstream(nc);
  jsm = await jetstreamManager(nc);
  consumerRequests = [];
  consumerWatch = nc.subscribe('$JS.API.CONSUMER.>', { callback: (_err, m) => void consumerRequests.push(m.subject) });
  await nc.flush();
});
afterAll(async () => {
  await nc?.drain();
  await nats?.stop();
});

/** Publishes `payloads` on the channels in turn; the sequence and subject each was stored at. */
async function publish(channels: string[], count: number): Promise<Array<{ seq: number; subject: string; data: string }>> {
  const stored = [];
  for (let i = 0; i < count; i++) {
    const subject = channelSubject(channels[i % channels.length]!);
    const data = `m${i}`;
    stored.push({ seq: (await js.publish(subject, data)).seq, subject, data });
  }
  return stored;
}

async function walk(w: Omit<LogWalk, 'stream'>, stopAfter = Infinity): Promise<{ got: WalkedMsg[]; count: number }> {
  const got: WalkedMsg[] = [];
  const count = await walkLog(jsm, { stream: STREAM_NAME, ...w }, (m) => {
    got.push(m);
    return got.length < stopAfter ? undefined : false;
  });
  return { got, count };
}

const seqs = (ms: Array<{ seq: number }>): number[] => ms.map((m) => m.seq);

describe('walking the log without a consumer', () => {
  it('reads exactly a range of one channel among interleaved channels, in order, with its subject, data and headers', async () => {
    const [a, b, c] = [channel(), channel(), channel()];
    const stored = await publish([a, b, c], 30);
    const ofA = stored.filter((m) => m.subject === channelSubject(a));
    // Bounds on other channels' messages: the range is the sequences, not the channel's messages.
    const from = ofA[2]!.seq - 1;
    const until = ofA[7]!.seq + 1;
    const { got, count } = await walk({ filter: channelSubject(a), fromSeq: from, untilSeq: until });
    expect(seqs(got)).toEqual(seqs(ofA.slice(2, 8)));
    expect(count).toBe(6);
    expect(got.map((m) => text.decode(m.data))).toEqual(ofA.slice(2, 8).map((m) => m.data));
    expect(got.every((m) => m.subject === channelSubject(a))).toBe(true);
    expect(got.every((m) => m.headers.keys().length === 0)).toBe(true);
    // Bounds on the channel's own messages are inclusive.
    const exact = await walk({ filter: channelSubject(a), fromSeq: ofA[3]!.seq, untilSeq: ofA[5]!.seq });
    expect(seqs(exact.got)).toEqual(seqs(ofA.slice(3, 6)));
  });

  it('reads to the end of the log when no end is given', async () => {
    const [a, b] = [channel(), channel()];
    const stored = await publish([a, b], 12);
    const ofB = stored.filter((m) => m.subject === channelSubject(b));
    const { got } = await walk({ filter: channelSubject(b), fromSeq: ofB[1]!.seq, untilSeq: null });
    expect(seqs(got)).toEqual(seqs(ofB.slice(1)));
    // A start below the oldest kept (or at 1) starts at the channel's first message.
    expect(seqs((await walk({ filter: channelSubject(b), fromSeq: 0 })).got)).toEqual(seqs(ofB));
  });

  it('steps over deleted messages, one by one and a window at a time alike', async () => {
    const [a, b] = [channel(), channel()];
    const stored = await publish([a, b], 20);
    const ofA = stored.filter((m) => m.subject === channelSubject(a));
    const gone = new Set([ofA[0]!.seq, ofA[3]!.seq, ofA[4]!.seq, ofA[9]!.seq, stored[7]!.seq, stored[19]!.seq]);
    for (const seq of gone) await jsm.streams.deleteMessage(STREAM_NAME, seq);
    const kept = (ms: typeof stored): number[] => seqs(ms).filter((s) => !gone.has(s));
    const range = { fromSeq: stored[0]!.seq, untilSeq: stored[stored.length - 1]!.seq };
    expect(seqs((await walk({ filter: channelSubject(a), ...range })).got)).toEqual(kept(ofA));
    // The last sequence of the range is deleted too: nothing past it, nothing missing.
    expect(seqs((await walk({ filter: STREAM_SUBJECTS, ...range, everySubject: true })).got)).toEqual(kept(stored));
    expect(seqs((await walk({ filter: STREAM_SUBJECTS, ...range })).got)).toEqual(kept(stored));
  });

  it('stops when the callback returns false, counting the messages before it', async () => {
    const [a, b] = [channel(), channel()];
    const stored = await publish([a, b], 10);
    const ofA = stored.filter((m) => m.subject === channelSubject(a));
    const one = await walk({ filter: channelSubject(a), fromSeq: stored[0]!.seq }, 3);
    expect(seqs(one.got)).toEqual(seqs(ofA.slice(0, 3)));
    expect(one.count).toBe(2);
    const windowed = await walk({ filter: STREAM_SUBJECTS, fromSeq: stored[0]!.seq, untilSeq: stored[9]!.seq, everySubject: true }, 4);
    expect(seqs(windowed.got)).toEqual(seqs(stored.slice(0, 4)));
    expect(windowed.count).toBe(3);
  });

  it('an empty range reads nothing', async () => {
    const [a, b] = [channel(), channel()];
    const stored = await publish([a, b], 6);
    const last = stored[5]!.seq;
    for (const w of [
      { filter: channelSubject(a), fromSeq: last, untilSeq: last - 1 },
      { filter: STREAM_SUBJECTS, fromSeq: last + 1, untilSeq: last, everySubject: true },
      // Only b's messages in the range.
      { filter: channelSubject(a), fromSeq: stored[1]!.seq, untilSeq: stored[1]!.seq },
      { filter: channelSubject(channel()), fromSeq: 1, untilSeq: null },
      { filter: channelSubject(a), fromSeq: last + 1, untilSeq: null },
    ]) {
      const { got, count } = await walk(w);
      expect(got, JSON.stringify(w)).toEqual([]);
      expect(count).toBe(0);
    }
  });

  it('reads the whole log (every channel) in order, over several windows, bounded or to the end', async () => {
    const channels = [channel(), channel(), channel()];
    const stored = await publish(channels, 150);
    const range = { filter: STREAM_SUBJECTS, fromSeq: stored[0]!.seq, untilSeq: stored[149]!.seq };
    const windowed = await walk({ ...range, everySubject: true });
    expect(seqs(windowed.got)).toEqual(seqs(stored));
    expect(windowed.got.map((m) => [m.subject, text.decode(m.data)])).toEqual(stored.map((m) => [m.subject, m.data]));
    expect(seqs((await walk(range)).got)).toEqual(seqs(stored));
    expect(seqs((await walk({ ...range, untilSeq: null, everySubject: true })).got)).toEqual(seqs(stored));
  });

  it('lets JetStream errors through, and fails with LogStalledError when nothing answers', async () => {
    await expect(walkLog(jsm, { stream: 'NO_SUCH_STREAM', filter: STREAM_SUBJECTS, fromSeq: 1 }, () => undefined)).rejects.toBeInstanceOf(JetStreamApiError);
    // A "JetStream" that hears requests and never answers (a leader gone, none elected yet).
    const silent = nc.subscribe('silent.>', { callback: () => undefined });
    await nc.flush();
    const deaf = await jetstreamManager(nc, { apiPrefix: 'silent', timeout: 200, checkAPI: false });
    const started = Date.now();
    const failed = await walkLog(deaf, { stream: STREAM_NAME, filter: STREAM_SUBJECTS, fromSeq: 1, stallMs: 500 }, () => undefined).catch((e: unknown) => e);
    silent.unsubscribe();
    expect(failed).toBeInstanceOf(LogStalledError);
    expect((failed as LogStalledError).code).toBe('log_read_stalled');
    // Asked again after the first timeout, given up once nothing answered for stallMs.
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });

  it('made no consumer, and asked for none', async () => {
    await nc.flush();
    consumerWatch.unsubscribe();
    expect(consumerRequests).toEqual([]);
    const consumers = [];
    for await (const c of jsm.consumers.list(STREAM_NAME)) consumers.push(c.name);
    expect(consumers).toEqual([]);
  });
});
