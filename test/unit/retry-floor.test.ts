// Every wait the relay tells a client before it comes back has a floor, MIN_RETRY_MS (issue 19):
// the `retry:` field, a close event's retryAfterMs and Retry-After. A relay that answers "now" sends
// every client it closes back at the same instant.
import { describe, expect, it } from 'vitest';
import { closeEvent, MIN_RETRY_MS } from '../../schemas/close.js';
import { RelayError } from '../../services/core/errors.js';
import { closeFrames } from '../../services/gateway/stream/close-reason.js';
import { encodeRetry } from '../../services/gateway/stream/sse.js';

describe('a relay never advises an immediate reconnect', () => {
  it('a close event told to wait 0 ms (a drain with RETRY_MIN=0s) advises the floor', () => {
    expect(MIN_RETRY_MS).toBe(1000);
    expect(closeEvent('draining', 0).retryAfterMs).toBe(MIN_RETRY_MS);
    expect(closeEvent('draining', 1500).retryAfterMs).toBe(1500);
    expect(closeFrames('draining', 0).toString()).toMatch(/^retry: 1000\n\n/);
  });

  it('the SSE retry: field is never below the floor', () => {
    expect(encodeRetry(0).toString()).toBe('retry: 1000\n\n');
    expect(encodeRetry(-5).toString()).toBe('retry: 1000\n\n');
    expect(encodeRetry(2000).toString()).toBe('retry: 2000\n\n');
  });

  it('Retry-After is whole seconds, at least 1', () => {
    expect(new RelayError('unavailable', 'x', { retryAfter: 0 }).retryAfter).toBe(1);
    expect(new RelayError('unavailable', 'x', { retryAfter: 0.2 }).retryAfter).toBe(1);
    expect(new RelayError('rate_limited', 'x', { retryAfter: 7 }).retryAfter).toBe(7);
    expect(new RelayError('bad_request', 'x').retryAfter).toBeUndefined();
  });
});
