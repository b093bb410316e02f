// A start that meets JetStream between leaders is tried again; one that cannot succeed by waiting
// (a missing permission, a stream relay setup must create, a bad setting) stops at once.
import { errors as natsErrors } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../services/core/logger.js';
import { NatsSetupError } from '../../services/core/nats-refusal.js';
import { momentary, startPatiently } from '../../services/core/start-patience.js';

const quiet = createLogger({ level: 'silent', pretty: false });

function named(name: string, message = name): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

describe('what a start may wait out', () => {
  it.each([
    ['a request timed out', new natsErrors.TimeoutError()],
    ['JetStream had no meta leader ("temporarily unavailable")', named('JetStreamApiError', 'JetStream system temporarily unavailable')],
    ['the server reached has no JetStream (its store full)', named('JetStreamNotEnabled', 'jetstream is not enabled')],
    ['nobody answered a request', named('NoResponders')],
    ['the cause of a wrapped error is one of these', new Error('mirror failed', { cause: new natsErrors.TimeoutError() })],
  ])('%s: tried again', (_what, e) => {
    expect(momentary(e)).toBe(true);
  });

  it.each([
    ['a stream relay setup must create', new NatsSetupError('The event log (stream RELAY) does not exist: run relay setup ...')],
    ['a missing permission', new natsErrors.RequestError('denied', { cause: new natsErrors.PermissionViolationError('Permissions Violation', 'publish', '$JS.API.INFO') })],
    ['a port already taken', Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' })],
    ['something else entirely', new TypeError('x is not a function')],
  ])('%s: stops start-up at once', (_what, e) => {
    expect(momentary(e)).toBe(false);
  });
});

describe('starting patiently', () => {
  it('tries again after momentary failures and returns what the first successful start made', async () => {
    let tries = 0;
    const started = await startPatiently(async () => {
      if (++tries < 3) throw named('JetStreamApiError', 'JetStream system temporarily unavailable');
      return 'serving';
    }, quiet);
    expect(started).toBe('serving');
    expect(tries).toBe(3);
  });

  it('gives the first lasting error to its caller without trying again', async () => {
    let tries = 0;
    const failing = startPatiently(async () => {
      tries++;
      throw new NatsSetupError('The event log (stream RELAY) does not exist');
    }, quiet);
    await expect(failing).rejects.toThrow(/does not exist/);
    expect(tries).toBe(1);
  });
});
