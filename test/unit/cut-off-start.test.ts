// With regions, a service starts unchecked only when JetStream's meta group refuses its checks three
// times in a row (a region cut off); an answer of any other kind in between starts the count again, so
// a super-cluster still settling is waited for, and without regions nothing is ever skipped.
import { JetStreamApiError } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { checkOrCutOff } from '../../services/core/cut-off-start.js';
import type { LayoutFindings } from '../../services/core/nats-check.js';
import { createLogger } from '../../services/core/logger.js';

const quiet = createLogger({ level: 'silent', pretty: false });
const refused = (): Error => new JetStreamApiError({ code: 503, err_code: 10008, description: 'JetStream system temporarily unavailable' });
const other = (): Error => new Error('no responders');
/** What a check that answered finds (a warning marks it apart from the unchecked start's empty findings). */
const found: LayoutFindings = { problems: [], warnings: ['a limit differs'], found: new Map() };

/** Runs the check until it resolves or `outcomes` run out; what each call did, in order. */
async function run(outcomes: Array<'refused' | 'other' | 'ok'>, regions: boolean): Promise<string[]> {
  let i = 0;
  const check = checkOrCutOff(async () => {
    const o = outcomes[i++];
    if (o === 'refused') throw refused();
    if (o === 'other') throw other();
    return found;
  }, regions, quiet);
  const seen: string[] = [];
  while (i < outcomes.length) {
    try {
      const f = await check();
      seen.push(f.warnings.length === 0 ? 'unchecked' : 'checked');
      return seen;
    } catch {
      seen.push('retry');
    }
  }
  return seen;
}

describe('starting in a region cut off', () => {
  it('starts unchecked after three refusals in a row', async () => {
    expect(await run(['refused', 'refused', 'refused'], true)).toEqual(['retry', 'retry', 'unchecked']);
  });

  it('counts again after an answer of another kind', async () => {
    expect(await run(['refused', 'refused', 'other', 'refused', 'refused', 'ok'], true)).toEqual(['retry', 'retry', 'retry', 'retry', 'retry', 'checked']);
  });

  it('never skips the check without regions', async () => {
    expect(await run(['refused', 'refused', 'refused', 'refused', 'ok'], false)).toEqual(['retry', 'retry', 'retry', 'retry', 'checked']);
  });
});
