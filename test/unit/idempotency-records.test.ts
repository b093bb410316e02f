// The Idempotency-Key records (services/ingress/idempotency.ts) over an in-memory bucket: what a
// POST and its resends are told, including while the bucket has no leader (the campaign measured
// 5-8 s after each NATS fault). Such a POST used to run without a record, leaving JetStream's
// message ids as the only guard against storing it twice, and the campaign saw nats-server 2.9
// store one message id twice across stream leader changes (docs/RELIABILITY.md): it is refused.
import { Counter, Registry } from 'prom-client';
import { beforeEach, describe, expect, it } from 'vitest';
import { isRelayError } from '../../services/core/errors.js';
import { createLogger } from '../../services/core/logger.js';
import { IdempotencyStore } from '../../services/ingress/idempotency.js';
import { MemoryKvBucket } from '../helpers/memory-kv-bucket.js';

interface Answer {
  accepted: number;
  dropped: number;
}

let bucket: MemoryKvBucket;
let store: IdempotencyStore<Answer>;
let unrecorded: Counter;

beforeEach(() => {
  bucket = new MemoryKvBucket();
  unrecorded = new Counter({ name: 'unrecorded', help: 'test', registers: [new Registry()] });
  store = new IdempotencyStore<Answer>(bucket, createLogger({ level: 'silent', pretty: false }), unrecorded);
});

async function refusal(p: Promise<unknown>): Promise<{ code: string; status: number; retryAfter: number | undefined }> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  if (!isRelayError(e)) throw new Error(`expected a refusal, got ${String(e)}`);
  return { code: e.code, status: e.status, retryAfter: e.retryAfter };
}

describe('Idempotency-Key records', () => {
  it('a first request runs; its resend is answered as the first time, without running', async () => {
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    await store.complete('alice', 'k1', 'print', { accepted: 1, dropped: 0 });
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'replay', answer: { accepted: 1, dropped: 0 } });
  });

  it('a resend while the first is still under way runs again (its message ids are the guard), another body is a 422', async () => {
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    expect((await refusal(store.reserve('alice', 'k1', 'other body'))).code).toBe('idempotency_key_reused');
  });

  it('while the bucket has no leader, a request is refused with 503 and Retry-After instead of running unrecorded', async () => {
    bucket.leaderless = true;
    expect(await refusal(store.reserve('alice', 'k1', 'print'))).toEqual({ code: 'unavailable', status: 503, retryAfter: 1 });
    expect(bucket.size).toBe(0);
    // Its resend once the bucket is back is recorded, runs once, and is answered from the record after.
    bucket.leaderless = false;
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    await store.complete('alice', 'k1', 'print', { accepted: 1, dropped: 0 });
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'replay', answer: { accepted: 1, dropped: 0 } });
  });

  it('while the bucket has no leader, a resend of a stored request is answered from its record (replicas still answer reads)', async () => {
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    await store.complete('alice', 'k1', 'print', { accepted: 1, dropped: 0 });
    bucket.leaderless = true;
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'replay', answer: { accepted: 1, dropped: 0 } });
  });

  it('while the bucket has no leader, a resend of a request still under way is refused, not run a second time', async () => {
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    bucket.leaderless = true;
    expect((await refusal(store.reserve('alice', 'k1', 'print'))).status).toBe(503);
  });

  it('an answer that cannot be recorded after the request was stored is counted, and its resend runs again', async () => {
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    bucket.leaderless = true;
    await store.complete('alice', 'k1', 'print', { accepted: 1, dropped: 0 });
    expect((await unrecorded.get()).values[0]?.value).toBe(1);
    bucket.leaderless = false;
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
  });

  it('the same key from two senders is two requests', async () => {
    expect(await store.reserve('alice', 'k1', 'print')).toEqual({ kind: 'run' });
    expect(await store.reserve('bob', 'k1', 'print')).toEqual({ kind: 'run' });
    expect(bucket.size).toBe(2);
  });
});
