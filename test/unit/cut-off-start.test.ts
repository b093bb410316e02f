// With regions, a service starts unchecked only once JetStream's meta group has refused or left
// unanswered its checks for CUT_OFF_AFTER_MS without a break (a region cut off): until then an
// answer of any other kind starts the wait again, so a super-cluster still electing its meta leader
// is waited for; once concluded, the cut stands for the rest of the start-up; and without regions
// nothing is ever skipped.
import { JetStreamApiError } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/nats-core';
import { describe, expect, it } from 'vitest';
import { checkOrCutOff, CUT_OFF_AFTER_MS, MetaSilence } from '../../services/core/cut-off-start.js';
import type { LayoutFindings } from '../../services/core/nats-check.js';
import { createLogger } from '../../services/core/logger.js';
import { ClaimIndex } from '../../services/gateway/ownership/claim-index.js';
import { MemoryClaimStore } from '../helpers/memory-claim-store.js';

const quiet = createLogger({ level: 'silent', pretty: false });
const refused = (): Error => new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
/** What a check that answered finds (a warning marks it apart from the unchecked start's empty findings). */
const found: LayoutFindings = { problems: [], warnings: ['a limit differs'], found: new Map() };

type Outcome = 'refused' | 'timeout' | 'other' | 'ok';

/** Runs the check once per outcome, `stepMs` apart on a clock of its own; what each call did. */
async function run(outcomes: readonly Outcome[], regions: boolean, stepMs: number): Promise<string[]> {
  let t = 0;
  let i = 0;
  const check = checkOrCutOff(
    async () => {
      const o = outcomes[i++];
      if (o === 'refused') throw refused();
      if (o === 'timeout') throw new TimeoutError();
      if (o === 'other') throw new Error('no responders');
      return found;
    },
    regions,
    quiet,
    new MetaSilence(() => t),
  );
  const seen: string[] = [];
  for (let n = 0; n < outcomes.length; n++, t += stepMs) {
    try {
      seen.push((await check()).warnings.length === 0 ? 'unchecked' : 'checked');
      return seen;
    } catch {
      seen.push('retry');
    }
  }
  return seen;
}

describe('starting in a region cut off', () => {
  it('starts unchecked once the meta group has refused or left unanswered every check for the whole wait', async () => {
    const step = CUT_OFF_AFTER_MS / 3;
    expect(await run(['refused', 'timeout', 'refused', 'refused'], true, step)).toEqual(['retry', 'retry', 'retry', 'unchecked']);
  });

  it('waits for the meta group of a mesh starting cold: refusals for less than the wait, then an answer', async () => {
    expect(await run(['refused', 'refused', 'refused', 'refused', 'ok'], true, 1_000)).toEqual(['retry', 'retry', 'retry', 'retry', 'checked']);
  });

  it('starts the wait again after an answer of another kind', async () => {
    const step = CUT_OFF_AFTER_MS / 3;
    expect(await run(['refused', 'refused', 'other', 'refused', 'refused', 'refused', 'refused'], true, step)).toEqual(['retry', 'retry', 'retry', 'retry', 'retry', 'retry', 'unchecked']);
  });

  it('never skips the check without regions', async () => {
    expect(await run(['refused', 'refused', 'refused', 'refused', 'ok'], false, CUT_OFF_AFTER_MS)).toEqual(['retry', 'retry', 'retry', 'retry', 'checked']);
  });
});

describe("a gateway's sweep of its previous life after a start cut off", () => {
  // A campaign run found a gateway in a region cut off ready 32-36 s after its start: its claim sweep
  // waited the meta group's silence out again from zero, after the start-up had waited it out.
  it("goes on from the start-up's watch of the silence: one refused read, then the claims are left to age out", async () => {
    let t = 0;
    const silence = new MetaSilence(() => t);
    silence.lasting(refused());
    t = CUT_OFF_AFTER_MS;
    let reads = 0;
    const log = {
      append: () => undefined,
      read: async (): Promise<Set<string>> => {
        reads++;
        throw refused();
      },
    };
    const liveness = { isAlive: () => true, hearing: () => true, mirror: { values: () => [] } };
    const index = new ClaimIndex({ log, store: new MemoryClaimStore(), nodeId: 'gw-cut', liveness, logger: quiet, notices: { tell: () => undefined }, inRegions: true, metaSilence: silence });
    await index.start(60_000);
    index.stop();
    expect(reads).toBe(1);
  });

  it('takes a refused read as the cut the start-up concluded, though a check was answered in between', async () => {
    let t = 0;
    const silence = new MetaSilence(() => t);
    silence.lasting(refused());
    t = CUT_OFF_AFTER_MS;
    expect(silence.lasting(refused())).toBe(true);
    // The layout's check, answered by the streams' leaders in the region.
    expect(silence.lasting(null)).toBe(false);
    t += 1_000;
    expect(silence.lasting(refused())).toBe(true);
  });

  it('waits a mesh starting cold out anew after an answer, when it never concluded a cut', async () => {
    let t = 0;
    const silence = new MetaSilence(() => t);
    silence.lasting(refused());
    t = CUT_OFF_AFTER_MS - 1;
    expect(silence.lasting(refused())).toBe(false);
    expect(silence.lasting(null)).toBe(false);
    t += 1_000;
    expect(silence.lasting(refused())).toBe(false);
  });
});
