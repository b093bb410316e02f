// Who is taken for dead, by a watcher's own clock. The case that matters: NATS fails for everyone
// at once, every heartbeat stops, and the watcher that hears the mesh again first must not take
// the others for dead (two gateways once swept each other's claims that way).
import { describe, expect, it } from 'vitest';
import { Sightings } from '../../services/core/sightings.js';

const TIMEOUT = 30_000;
const BEAT = TIMEOUT / 3;

/** A watcher `self` and one other node, both beating every BEAT from 0 until `until`. */
function bothBeat(until: number): Sightings {
  const s = new Sightings(TIMEOUT, 'self', 0);
  for (let t = 0; t <= until; t += BEAT) {
    s.seen('self', t);
    s.seen('other', t);
  }
  return s;
}

describe('sightings', () => {
  it('a node unseen for the timeout is dead while the watcher hears itself', () => {
    const s = bothBeat(60_000);
    for (let t = 70_000; t <= 100_000; t += BEAT) s.seen('self', t);
    expect(s.hearing(100_000)).toBe(true);
    expect(s.isAlive('other', 60_000 + TIMEOUT - 1)).toBe(true);
    expect(s.isAlive('other', 60_000 + TIMEOUT)).toBe(false);
  });

  it('a watcher that has not seen its own beat for two beats is deaf', () => {
    const s = bothBeat(60_000);
    expect(s.hearing(60_000 + 2 * BEAT)).toBe(true);
    expect(s.hearing(60_000 + 2 * BEAT + 1)).toBe(false);
  });

  it('after an outage that silenced everyone, the others get a whole timeout from when the watcher hears itself again', () => {
    const s = bothBeat(60_000);
    // Nothing is heard for 40 s (longer than the timeout), then the watcher's own beat comes back first.
    s.seen('self', 100_000);
    expect(s.hearing(100_000)).toBe(true);
    expect(s.isAlive('other', 100_001)).toBe(true);
    expect(s.isAlive('other', 100_000 + TIMEOUT - 1)).toBe(true);
    // The other came back too, and beats: alive; had it not, dead a timeout after the watcher heard itself.
    s.seen('other', 105_000);
    expect(s.isAlive('other', 105_000 + TIMEOUT - 1)).toBe(true);
    expect(s.isAlive('other', 105_000 + TIMEOUT)).toBe(false);
    expect(s.isAlive('never-came-back', 100_000 + TIMEOUT)).toBe(false);
  });

  it('a watcher that does not beat (the admin service) always hears, and judges by the others alone', () => {
    const s = new Sightings(TIMEOUT, undefined, 0);
    s.seen('other', 0);
    expect(s.hearing(1_000_000)).toBe(true);
    expect(s.isAlive('other', TIMEOUT)).toBe(false);
  });

  it('an unknown node counts as alive until the watcher has watched for a whole timeout', () => {
    const s = new Sightings(TIMEOUT, 'self', 5_000);
    expect(s.isAlive('stranger', 5_000 + TIMEOUT - 1)).toBe(true);
    expect(s.isAlive('stranger', 5_000 + TIMEOUT)).toBe(false);
  });
});
