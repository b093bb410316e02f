// What start-up and `relay setup` retry while JetStream settles, and what they give up on at once:
// a problem already said in a sentence after its own wait (a region's servers offline for 45 s,
// services/core/nats-setup.ts) is not waited out again.
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
