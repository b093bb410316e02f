// Probe of 429 too_many_session_checks: Retry-After values (never 0, negative, fractional or huge),
// whether spellings of X-Forwarded-For (or other headers) dodge the per-address budget without
// TRUSTED_PROXIES, whether one address's flood throttles another, and what a trusted peer can do.
//
//   npx tsx findings/throttle-probe.ts
//
// Exit 1 when a Retry-After is out of range, a spoof dodges the throttle, or another address suffers.

import { raw, sleep, startStack } from './lib/stack.js';

let n = 0;

async function ask(port: number, from: string, extra: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; retryAfter: string | undefined; code: string }> {
  const headers: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    authorization: `Bearer junk-${process.pid}-${++n}`,
    'client-id': 'x',
    'client-secret': 'y',
    'x-irc-multiplayer-server': 'throttle.example.net',
    accept: 'text/event-stream',
    'user-agent': 'probe/1.0+abc',
    ...(method === 'POST' ? { 'content-type': 'application/json', 'content-length': '2' } : {}),
    ...extra,
    connection: 'close',
  };
  const r = await raw(port, `${method} / HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${method === 'POST' ? '{}' : ''}`, from);
  await Promise.race([r.closed, sleep(6000)]);
  r.socket.destroy();
  const text = r.text();
  const status = Number(text.split(' ')[1] ?? 0);
  const retryAfter = /\r\nretry-after: ([^\r]*)/i.exec(text)?.[1];
  const code = /"error":"([^"]+)"/.exec(text)?.[1] ?? '';
  return { status, retryAfter, code };
}

function tally(rs: Array<{ status: number; retryAfter: string | undefined; code: string }>): string {
  const m = new Map<string, number>();
  for (const r of rs) m.set(`${r.status} ${r.code} ra=${r.retryAfter ?? '-'}`, (m.get(`${r.status} ${r.code} ra=${r.retryAfter ?? '-'}`) ?? 0) + 1);
  return [...m].map(([k, v]) => `${v}x ${k}`).join(', ');
}

async function main(): Promise<number> {
  let flagged = 0;
  const flag = (why: string): void => {
    flagged++;
    console.log(`FLAG ${why}`);
  };
  const badRetry = (rs: Array<{ status: number; retryAfter: string | undefined }>): boolean =>
    rs.some((r) => (r.status === 429 || r.status === 503) && (r.retryAfter === undefined || !/^[1-9]\d{0,2}$/.test(r.retryAfter)));

  {
    const stack = await startStack({ relay: { PROFILE_API_RATE_PER_ADDRESS: '2', PROFILE_API_RATE_BURST: '20', PROFILE_API_PER_ADDRESS: '8' } });
    const relay = stack.relay!;
    const port = Number(new URL(relay.url).port);
    try {
      relay.profile.setDelay(800);
      // A burst from one address: places (8) and rate (20 then 2/s).
      const burst = await Promise.all(Array.from({ length: 40 }, () => ask(port, '127.0.0.20')));
      console.log(`burst of 40 GETs from 127.0.0.20: ${tally(burst)}`);
      if (badRetry(burst)) flag('a Retry-After out of range in the burst');
      // The rate alone.
      relay.profile.setDelay(0);
      const seq: typeof burst = [];
      for (let i = 0; i < 30; i++) seq.push(await ask(port, '127.0.0.21', {}, 'POST'));
      console.log(`30 POSTs one after another from 127.0.0.21: ${tally(seq)}`);
      if (badRetry(seq)) flag('a Retry-After out of range in the sequence');
      // Dodges, from the throttled address.
      const dodges: Array<[string, Record<string, string>]> = [
        ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.9' }],
        ['X-Forwarded-For list', { 'x-forwarded-for': '203.0.113.10, 198.51.100.1' }],
        ['X-Real-IP', { 'x-real-ip': '203.0.113.11' }],
        ['Forwarded', { forwarded: 'for=203.0.113.12' }],
        ['True-Client-IP', { 'true-client-ip': '203.0.113.13' }],
        ['CF-Connecting-IP', { 'cf-connecting-ip': '203.0.113.14' }],
      ];
      for (const [name, h] of dodges) {
        const rs = await Promise.all(Array.from({ length: 5 }, () => ask(port, '127.0.0.21', h)));
        console.log(`from the throttled address with ${name}: ${tally(rs)}`);
        if (rs.some((r) => r.status === 401)) flag(`${name} dodged the per-address throttle without TRUSTED_PROXIES`);
      }
      // Another address is unaffected.
      const other = await ask(port, '127.0.0.22');
      console.log(`another address meanwhile: ${other.status} ${other.code}`);
      if (other.status !== 401) flag('another address was throttled by the first one\'s flood');
      // Upstream 429: Retry-After from the relay is whole, at least 1, at most 600.
      relay.profile.setMode('rate-limited');
      const up = await ask(port, '127.0.0.23');
      await sleep(1300);
      const up2 = await ask(port, '127.0.0.24');
      console.log(`profile API 429 (its Retry-After 10): first ${up.status} ${up.code} ra=${up.retryAfter}, 1.3 s later ${up2.status} ${up2.code} ra=${up2.retryAfter}`);
      if (badRetry([up, up2])) flag('upstream back-off Retry-After out of range');
    } finally {
      await stack.stop();
    }
  }
  {
    // Behind TRUSTED_PROXIES=loopback: X-Forwarded-For is believed from loopback peers (by design); check
    // the spellings of one address share one budget.
    const stack = await startStack({ relay: { PROFILE_API_RATE_PER_ADDRESS: '1', PROFILE_API_RATE_BURST: '3', TRUSTED_PROXIES: 'loopback' } });
    const port = Number(new URL(stack.relay!.url).port);
    try {
      const spellings = ['203.0.113.50', '::ffff:203.0.113.50', '::FFFF:CB00:7132', '203.0.113.050', '0xcb.0.113.50', '3405803826', '203.0.113.50 ', '[203.0.113.50]', '203.0.113.50:1234'];
      const rs = [];
      for (const s of spellings) {
        const r = await ask(port, '127.0.0.30', { 'x-forwarded-for': s });
        rs.push(r);
        console.log(`trusted peer, X-Forwarded-For ${JSON.stringify(s)}: ${r.status} ${r.code}`);
      }
      const passed = rs.filter((r) => r.status === 401).length;
      if (passed > 3) flag(`${passed} look-ups for one address spelled ${spellings.length} ways (budget 3): spellings counted apart`);
      const victim = await ask(port, '127.0.0.31', { 'x-forwarded-for': '203.0.113.50' });
      console.log(`(by design behind a trusted proxy) a request naming 203.0.113.50 now: ${victim.status} ${victim.code}`);
    } finally {
      await stack.stop();
    }
  }
  console.log(`${flagged} flagged`);
  return flagged > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
