// What start-up and `relay setup` retry while JetStream settles, and what they give up on at once:
// a problem already said in a sentence after its own wait (a region's servers offline for 45 s,
// services/core/nats-setup.ts) is not waited out again. `relay setup` tries only 3 times, but waits
// longer for a meta group that does not answer: CI saw it refused moments after a region's servers
// came back from a restart, which the mesh test regions-setup then failed on.
import { JetStreamApiError } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../services/core/logger.js';
import { NatsSetupError } from '../../services/core/nats-refusal.js';
import { retry } from '../../services/core/nats.js';

const quiet = createLogger({ level: 'silent', pretty: false });

describe('retrying while JetStream settles', () => {
  it('tries again after a refusal, and answers once JetStream does', async () => {
    let calls = 0;
    const answer = await retry(async () => {
      if (++calls < 3) throw new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
      return 'laid out';
    }, quiet, 5);
    expect([answer, calls]).toEqual(['laid out', 3]);
  });

  it('goes on past its tries while the meta group does not answer, for as long as it was told, and no longer', async () => {
    const unavailable = (): JetStreamApiError => new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
    let calls = 0;
    const answer = await retry(async () => {
      if (++calls < 5) throw unavailable();
      return 'laid out';
    }, quiet, 2, 60_000);
    expect([answer, calls]).toEqual(['laid out', 5]);
    calls = 0;
    await expect(
      retry(async () => {
        calls++;
        throw unavailable();
      }, quiet, 2, 0),
    ).rejects.toThrow('temporarily unavailable');
    expect(calls).toBe(2);
  });

  it('does not wait for the meta group past its tries on any other error', async () => {
    let calls = 0;
    await expect(
      retry(async () => {
        calls++;
        throw new Error('stream name already in use with a different configuration');
      }, quiet, 2, 60_000),
    ).rejects.toThrow('already in use');
    expect(calls).toBe(2);
  });

  it('gives up at once on a setup problem already said in a sentence', async () => {
    let calls = 0;
    const said = new NatsSetupError('the event log of region b cannot be placed in region b: JetStream has seen its servers offline for 45 s.');
    await expect(
      retry(async () => {
        calls++;
        throw said;
      }, quiet, 5),
    ).rejects.toBe(said);
    expect(calls).toBe(1);
  });
});
