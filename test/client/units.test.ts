// The library's parts that need no relay: back-off arithmetic, the SSE reader on awkward chunking,
// and presence coalescing in time.
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../clients/typescript/src/backoff.js';
import { Coalescer } from '../../clients/typescript/src/presence.js';
import { check } from '../../clients/typescript/src/check.js';
import { META_SCHEMA, PAYLOAD_SCHEMAS } from '../../clients/typescript/src/generated/schemas.js';
import { readSse } from '../../clients/typescript/src/sse.js';

function body(text: string, chunkSize: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunkSize));
      at += chunkSize;
    },
  });
}

describe('Backoff', () => {
  it('equal jitter: each wait is random within [max(base, w/2), w), w = min(cap, base x 2^(n+1)); reset starts over', () => {
    const top = new Backoff({ baseMs: 100, capMs: 1000, random: () => 0.999999 });
    expect([1, 2, 3, 4, 5, 6].map(() => top.next())).toEqual([199, 399, 799, 999, 999, 999]);
    expect(top.attempts).toBe(6);
    top.reset();
    expect(top.next()).toBe(199);
    // The unluckiest draw still waits the base: no tight loop.
    const bottom = new Backoff({ baseMs: 100, capMs: 1000, random: () => 0 });
    expect([1, 2, 3, 4, 5].map(() => bottom.next())).toEqual([100, 200, 400, 500, 500]);
  });

  it('relay advice is type-checked, floored at the base and capped: it may lengthen a wait, never shorten it or overflow a timer', () => {
    const b = new Backoff({ baseMs: 100, capMs: 1000, random: () => 0 });
    expect([0, -5, 50, 300, 1e12, Infinity, NaN, '0', null, undefined, {}].map((v) => b.advice(v))).toEqual([
      100, 100, 100, 300, 1000, undefined, undefined, undefined, undefined, undefined, undefined,
    ]);
    expect(b.next(5000)).toBe(1000);
    expect(b.next(0)).toBe(200);
    // The relay's retry: raises the base within [base, cap], never below the configured one.
    expect(new Backoff({ baseMs: 100, capMs: 60_000, random: () => 0 }).next(undefined, 2000)).toBe(2000);
    expect(new Backoff({ baseMs: 60_000, capMs: 60_000, random: () => 0.5 }).next(undefined, 2000)).toBe(60_000);
    expect(new Backoff({ baseMs: 100, capMs: 1000, random: () => 0 }).next(undefined, 0)).toBe(100);
    expect(new Backoff({ baseMs: 100, capMs: 1000, random: () => 0 }).next(undefined, 1e12)).toBe(1000);
  });
});

describe('readSse', () => {
  const stream = [
    'retry: 2000\n\n',
    ': connected to play.example.net\n\n',
    'event: meta\ndata: {"uuid":"3f1e8d2a-6b7c-4d5e-9f10-112233445566","agent":null,"channel":"play.example.net"}\n\n',
    'id: 7\ndata: {"type":"chat","message":"héllo ✓"}\n\n',
    'data: {"type":"chat","message":"no meta: not a frame"}\n\n',
    'event: meta\ndata: {"uuid":"00000000-0000-0000-0000-000000000000","agent":"relay","channel":"play.example.net"}\n\n',
    'data: {"type":"keepalive"}\n\n',
    'event: something-new\ndata: {}\n\n',
    'retry: 1234\n\n',
    'event: close\ndata: {"reason":"draining","message":"closed: the relay is restarting","reconnect":true,"retryAfterMs":1234}\n\n',
    ': closed: the relay is restarting\n\n',
  ].join('');

  it.each([1, 3, 17, 4096])('pairs meta and data, reads ids, retry:, comments and the close event, in chunks of %i bytes', async (size) => {
    const seen: string[] = [];
    await readSse(body(stream, size), {
      onBytes: () => undefined,
      onRetry: (ms) => seen.push(`retry ${ms}`),
      onComment: (c) => seen.push(`comment ${c}`),
      onReady: () => seen.push('ready'),
      onClose: (e) => seen.push(`close ${JSON.stringify(e)}`),
      onPair: (meta, payload, id) => seen.push(`pair ${(meta as { uuid: string }).uuid.slice(0, 4)} ${JSON.stringify(payload)} ${id}`),
      onInvalid: (reason, id) => seen.push(`invalid ${reason} ${id}`),
    });
    expect(seen).toEqual([
      'retry 2000',
      'comment connected to play.example.net',
      'pair 3f1e {"type":"chat","message":"héllo ✓"} 7',
      'invalid unpaired_data null',
      'pair 0000 {"type":"keepalive"} null',
      'retry 1234',
      'close {"reason":"draining","message":"closed: the relay is restarting","reconnect":true,"retryAfterMs":1234}',
      'comment closed: the relay is restarting',
    ]);
  });
});

describe('Coalescer', () => {
  it('sends the first at once and the latest once per interval, one at a time', async () => {
    const sent: Array<{ v: number; at: number }> = [];
    const t0 = Date.now();
    const c = new Coalescer<number, number>(10, async (v) => {
      sent.push({ v, at: Date.now() - t0 });
      await new Promise((r) => setTimeout(r, 5));
      return v;
    });
    const results = await Promise.all([c.push(1), c.push(2), c.push(3)]);
    expect(results).toEqual([1, { superseded: true }, 3]);
    expect(sent.map((s) => s.v)).toEqual([1, 3]);
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(100 - 5);
    // Within the interval of the last send, 4 waits, 5 replaces it, and stop() drops 5.
    const waiting = [c.push(4), c.push(5)];
    c.stop();
    expect(await Promise.all(waiting)).toEqual([{ superseded: true }, { superseded: true }]);
    expect(sent).toHaveLength(2);
  });
});

describe("the library's frame check reads every keyword the relay's documents use", () => {
  // Guards: the documents spell a nullable agent `type: ["string", "null"]` and closed sets as
  // `enum` (for Java and Kotlin generators); a checker that knew neither refused every meta frame.
  it('accepts a meta frame whose agent is a string or null, and refuses any other agent', () => {
    const meta = { uuid: '5b0b5c3e-1f5e-4a7e-9a38-2d9b1d0c7e11', channel: 'play.example.net' };
    expect(check(META_SCHEMA, { ...meta, agent: 'mod/1.0' })).toBeNull();
    expect(check(META_SCHEMA, { ...meta, agent: null })).toBeNull();
    expect(check(META_SCHEMA, { ...meta, agent: 5 })).not.toBeNull();
  });

  it('accepts a member of an enum and refuses anything else', () => {
    const include = (v: unknown): string | null => check(PAYLOAD_SCHEMAS['resend_request'] ?? {}, { type: 'resend_request', include: [v] });
    expect(include('presence')).toBeNull();
    expect(include('chat')).not.toBeNull();
  });
});
