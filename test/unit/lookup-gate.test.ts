// The look-up gate alone: fairness by client address (never by credentials, which are public), the
// queue bound, deadlines, cancels, and that nothing a client abandons stays in memory.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { isRelayError } from '../../services/core/errors.js';
import { LookupGate, type GateRefusal, type Ticket } from '../../services/core/lookup-gate.js';

const LONG = 60_000;

function gate(places: number, maxQueue: number, perAddress: number, ipv6Prefix = 64): { gate: LookupGate; refusals: GateRefusal[] } {
  const refusals: GateRefusal[] = [];
  return { gate: new LookupGate({ places, maxQueue, perAddress, ipv6Prefix, refused: (r) => refusals.push(r) }), refusals };
}

function busy(f: () => Ticket): string {
  try {
    f();
  } catch (e) {
    if (isRelayError(e)) return e.code;
    throw e;
  }
  return 'entered';
}

/** Whether the ticket's place was granted by now (after the microtasks already queued). */
async function isGranted(t: Ticket): Promise<boolean> {
  let granted = false;
  t.granted.then(() => (granted = true), () => undefined);
  await Promise.resolve();
  await Promise.resolve();
  return granted;
}

describe('look-up gate: fairness by client address', () => {
  it('a flood from one address holds at most its share (beyond it, throttled: 429 too_many_session_checks); another address gets a place at once', async () => {
    const { gate: g, refusals } = gate(16, 100, 4);
    const flood = Array.from({ length: 4 }, () => g.enter('127.0.0.2', LONG));
    expect(busy(() => g.enter('127.0.0.2', LONG))).toBe('too_many_session_checks');
    expect(refusals).toEqual(['address_busy']);
    const player = g.enter('127.0.0.3', LONG);
    expect(await isGranted(player)).toBe(true);
    for (const t of [...flood, player]) t.leave();
    expect(g.addresses).toBe(0);
  });

  it('counts an IPv6 block of the configured prefix as one address (56: a home given a /56 is one address)', () => {
    const { gate: g } = gate(16, 100, 2, 56);
    const held = [g.enter('2001:db8:1:200::1', LONG), g.enter('2001:db8:1:2ff::1', LONG)];
    expect(busy(() => g.enter('2001:db8:1:2aa::1', LONG))).toBe('too_many_session_checks');
    const other = g.enter('2001:db8:1:300::1', LONG);
    for (const t of [...held, other]) t.leave();
    expect(g.addresses).toBe(0);
  });

  it('counts an IPv6 /64 as one address, and an IPv4-mapped peer as its IPv4 address', () => {
    const { gate: g } = gate(16, 100, 2);
    const held = [g.enter('2001:db8:1:2::1', LONG), g.enter('2001:db8:1:2:ffff::9', LONG)];
    expect(busy(() => g.enter('2001:db8:1:2::77', LONG))).toBe('too_many_session_checks');
    const other = g.enter('2001:db8:1:3::1', LONG);
    const v4 = [g.enter('127.0.0.5', LONG), g.enter('::ffff:127.0.0.5', LONG)];
    expect(busy(() => g.enter('127.0.0.5', LONG))).toBe('too_many_session_checks');
    for (const t of [...held, other, ...v4]) t.leave();
    expect(g.addresses).toBe(0);
  });

  it('serves waiting addresses in turn when every place is taken (a long queue from one is no queue for the others)', async () => {
    const { gate: g } = gate(1, 100, 10);
    const running = g.enter('10.0.0.1', LONG);
    const a = [g.enter('10.0.0.1', LONG), g.enter('10.0.0.1', LONG), g.enter('10.0.0.1', LONG)];
    const b = g.enter('10.0.0.2', LONG);
    const order: string[] = [];
    a.forEach((t, i) => void t.granted.then(() => order.push(`a${i}`)));
    void b.granted.then(() => order.push('b'));
    running.leave();
    await a[0]!.granted;
    a[0]!.leave();
    await b.granted;
    b.leave();
    await a[1]!.granted;
    a[1]!.leave();
    await a[2]!.granted;
    a[2]!.leave();
    expect(order).toEqual(['a0', 'b', 'a1', 'a2']);
    expect(g.addresses).toBe(0);
  });

  it('bounds the whole queue, all addresses together: 503 profile_api_busy (queue_full, the relay is full) when no address has more waiting than the newcomer', () => {
    const { gate: g, refusals } = gate(1, 2, 10);
    const held = [g.enter('10.0.0.1', LONG), g.enter('10.0.0.2', LONG), g.enter('10.0.0.3', LONG)];
    expect(busy(() => g.enter('10.0.0.2', LONG))).toBe('profile_api_busy');
    expect(refusals).toEqual(['queue_full']);
    for (const t of held) t.leave();
    expect(g.addresses).toBe(0);
  });

  it('a waiter leaves at its deadline, freeing its share and its queue place; nothing stays behind', async () => {
    const { gate: g } = gate(1, 1, 2);
    const running = g.enter('10.0.0.1', LONG);
    const late = g.enter('10.0.0.2', 20);
    await expect(late.granted).rejects.toMatchObject({ code: 'profile_api_unavailable' });
    // Its queue place is free again.
    const next = g.enter('10.0.0.3', LONG);
    running.leave();
    await next.granted;
    next.leave();
    late.leave();
    expect(g.addresses).toBe(0);
  });

  it('cancel drops a waiter before its turn (the next is served instead); a granted place stays until leave', async () => {
    const { gate: g } = gate(1, 10, 10);
    const running = g.enter('10.0.0.1', LONG);
    const gone = g.enter('10.0.0.2', LONG);
    const next = g.enter('10.0.0.3', LONG);
    gone.cancel();
    await expect(gone.granted).rejects.toMatchObject({ code: 'profile_api_unavailable' });
    running.cancel();
    expect(await isGranted(next)).toBe(false);
    running.leave();
    await next.granted;
    // leave() twice gives back one place only.
    next.leave();
    next.leave();
    const after = g.enter('10.0.0.4', LONG);
    expect(await isGranted(after)).toBe(true);
    const queued = g.enter('10.0.0.5', LONG);
    expect(await isGranted(queued)).toBe(false);
    after.leave();
    await queued.granted;
    queued.leave();
    expect(g.addresses).toBe(0);
  });
});

describe('look-up gate: a full queue drops from the longest (a few hundred addresses cannot shut out a newcomer)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** One place taken by 10.0.0.1; the queue (3) full: 10.0.0.2 waits with three. */
  function full(): { g: LookupGate; refusals: GateRefusal[]; running: Ticket; waiting: Ticket[] } {
    const { gate: g, refusals } = gate(1, 3, 10);
    const running = g.enter('10.0.0.1', LONG);
    const waiting = [g.enter('10.0.0.2', LONG), g.enter('10.0.0.2', LONG), g.enter('10.0.0.2', LONG)];
    return { g, refusals, running, waiting };
  }

  it('a newcomer from an address with nothing queued displaces the newest waiter of the longest queue, which hears 503 profile_api_busy at once', async () => {
    const { g, refusals, running, waiting } = full();
    const newcomer = g.enter('10.0.0.9', LONG);
    await expect(waiting[2]!.granted).rejects.toMatchObject({ code: 'profile_api_busy', retryAfter: expect.any(Number) });
    expect(refusals).toEqual(['displaced']);
    // The flooder's oldest waiters keep their places; its newcomers are refused, not displacing.
    expect(busy(() => g.enter('10.0.0.2', LONG))).toBe('profile_api_busy');
    expect(refusals).toEqual(['displaced', 'queue_full']);
    for (const t of [running, ...waiting, newcomer]) t.leave();
    expect(g.addresses).toBe(0);
  });

  it('grants in turn after a displacement: the newcomer is served between the longest queue\'s waiters', async () => {
    const { g, running, waiting } = full();
    const newcomer = g.enter('10.0.0.9', LONG);
    const order: string[] = [];
    void waiting[0]!.granted.then(() => order.push('a0'));
    void waiting[1]!.granted.then(() => order.push('a1'));
    void newcomer.granted.then(() => order.push('new'));
    running.leave();
    await waiting[0]!.granted;
    waiting[0]!.leave();
    await newcomer.granted;
    newcomer.leave();
    await waiting[1]!.granted;
    waiting[1]!.leave();
    expect(order).toEqual(['a0', 'new', 'a1']);
    waiting[2]!.leave();
    expect(g.addresses).toBe(0);
  });

  it("a displaced waiter's deadline, cancel and leave change nothing afterwards (no place or queue slot is given back twice)", async () => {
    vi.useFakeTimers();
    const { gate: g } = gate(1, 2, 10);
    const running = g.enter('10.0.0.1', LONG);
    const doomed = [g.enter('10.0.0.2', 50), g.enter('10.0.0.2', 50)];
    const newcomer = g.enter('10.0.0.9', LONG);
    await expect(doomed[1]!.granted).rejects.toMatchObject({ code: 'profile_api_busy' });
    doomed[1]!.cancel();
    doomed[1]!.leave();
    // The queue is full again (one waiter each): an address with as many waiting is refused.
    expect(busy(() => g.enter('10.0.0.2', LONG))).toBe('profile_api_busy');
    expect(await isGranted(newcomer)).toBe(false);
    // The other waiter's deadline passes; the displaced one's timer must not unqueue anyone else.
    await vi.advanceTimersByTimeAsync(60);
    await expect(doomed[0]!.granted).rejects.toMatchObject({ code: 'profile_api_unavailable' });
    expect(await isGranted(newcomer)).toBe(false);
    running.leave();
    await newcomer.granted;
    newcomer.leave();
    doomed[0]!.leave();
    expect(g.addresses).toBe(0);
  });

  it('a waiter whose own address has fewer waiting may displace; one whose address has as many may not', () => {
    const { gate: g, refusals } = gate(1, 4, 10);
    const held = [g.enter('10.0.0.1', LONG), g.enter('10.0.0.2', LONG), g.enter('10.0.0.2', LONG), g.enter('10.0.0.2', LONG), g.enter('10.0.0.3', LONG)];
    // 10.0.0.3 has one waiting, 10.0.0.2 three: 10.0.0.3 gets in, 10.0.0.2 down to two.
    held.push(g.enter('10.0.0.3', LONG));
    expect(refusals).toEqual(['displaced']);
    // Now two each: an equal is refused.
    expect(busy(() => g.enter('10.0.0.3', LONG))).toBe('profile_api_busy');
    expect(refusals).toEqual(['displaced', 'queue_full']);
    for (const t of held) t.leave();
    expect(g.addresses).toBe(0);
  });
});
