// Throttling is a 4xx (DESIGN.md section 7): every limit on one client's share (per address, per
// account, per API key) answers 429 with Retry-After and a code of its own; a bound every client
// shares, or the profile API's own trouble, is a 503. One row per limit, each against a relay of its
// own with the limit set low, a real profile API server and real sockets from loopback addresses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_THROTTLES } from '../schemas/http-throttles.js';
import { Scope } from '../services/core/scopes.js';
import { waitUntil as eventually } from '../tools/poll.js';
import { postFrom } from './helpers/clients.js';
import { readMetrics } from './helpers/metrics.js';
import { startTestNats, type TestNats } from './helpers/nats.js';
import { RelayFixture } from './helpers/relay.js';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  retryAfter: string | undefined;
}

interface Row {
  limit: string;
  settings: Record<string, string>;
  /** Drives one client past the limit; the answer that refused it. */
  exceed: (relay: RelayFixture) => Promise<Answer>;
  status: 429 | 503;
  code: string;
}

const chat = { type: 'chat', message: 'over the share' };
let tokens = 0;
/** A token the profile API does not know: its look-up costs what a real one does, and answers 401. */
const junk = (): Record<string, string> => ({ authorization: `Bearer junk-throttle-${++tokens}`, 'x-irc-multiplayer-server': 'throttle.example.net' });

async function post(relay: RelayFixture, from: string, headers: Record<string, string>, body: unknown = chat): Promise<Answer> {
  const r = await postFrom(from, relay.url, body, headers);
  return { status: r.status, body: r.body, retryAfter: r.headers.get('retry-after') ?? undefined };
}

async function open(relay: RelayFixture, headers: Record<string, string>, from?: string): Promise<Answer> {
  const s = await relay.open(headers, from === undefined ? {} : { localAddress: from });
  const { status, body } = await s.refusal();
  return { status, body, retryAfter: s.headers['retry-after'] };
}

/** Holds one look-up from `from` at the profile API (which does not answer) until the test ends. */
async function holdLookup(relay: RelayFixture, from: string): Promise<void> {
  relay.profile.setMode('hang');
  const headers = junk();
  // Its own answer (503 once the profile API lets it go) is not what the row is about.
  postFrom(from, relay.url, chat, headers).catch(() => undefined);
  const token = headers['authorization']!.slice('Bearer '.length);
  await eventually(() => relay.profile.calls.includes(token), 'the held look-up to reach the profile API');
}

const throttles: Row[] = [
  {
    limit: 'session look-ups at once per client address',
    settings: { PROFILE_API_PER_ADDRESS: '1' },
    exceed: async (relay) => {
      await holdLookup(relay, '127.0.0.60');
      const key = await relay.createKey();
      return open(relay, relay.headers(relay.player(), key, 'throttle.example.net'), '127.0.0.60');
    },
    status: 429,
    code: 'too_many_session_checks',
  },
  {
    limit: 'new session look-ups per second per client address',
    settings: { PROFILE_API_RATE_PER_ADDRESS: '0.001', PROFILE_API_RATE_BURST: '1' },
    exceed: async (relay) => {
      expect((await post(relay, '127.0.0.61', junk())).status).toBe(401);
      return post(relay, '127.0.0.61', junk());
    },
    status: 429,
    code: 'too_many_session_checks',
  },
  {
    limit: 'entries per second per account',
    settings: { RATE_LIMIT_PER_SECOND: '0.001', RATE_LIMIT_BURST: '2' },
    exceed: async (relay) => {
      const headers = relay.headers(relay.player(), await relay.createKey(), 'throttle.example.net');
      expect((await post(relay, '127.0.0.62', headers, [chat, chat])).status).toBe(200);
      return post(relay, '127.0.0.62', headers);
    },
    status: 429,
    code: 'rate_limited',
  },
  {
    limit: 'payload bytes per second per account',
    settings: { RATE_LIMIT_BYTES_PER_SECOND: '1', RATE_LIMIT_BYTES_BURST: '300' },
    exceed: async (relay) => {
      const headers = relay.headers(relay.player(), await relay.createKey(), 'throttle.example.net');
      expect((await post(relay, '127.0.0.63', headers)).status).toBe(200);
      return post(relay, '127.0.0.63', headers, { type: 'chat', message: 'x'.repeat(260) });
    },
    status: 429,
    code: 'rate_limited',
  },
  {
    limit: 'streams per account across the mesh',
    settings: { MAX_STREAMS_PER_ACCOUNT: '1' },
    exceed: async (relay) => {
      const key = await relay.createKey();
      const player = relay.player();
      await relay.connect(relay.headers(player, key, 'one.example.net'));
      return open(relay, relay.headers(player, key, 'two.example.net'));
    },
    status: 429,
    code: 'too_many_streams',
  },
  {
    limit: 'sessionless streams per bridge key across the mesh',
    settings: { MAX_STREAMS_PER_KEY: '1' },
    exceed: async (relay) => {
      const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Receive]);
      await relay.connect(relay.headers(null, bridge));
      return open(relay, relay.headers(null, bridge));
    },
    status: 429,
    code: 'too_many_streams',
  },
  {
    limit: 'stream opens per second per account',
    settings: { STREAM_OPEN_RATE: '0.001', STREAM_OPEN_BURST: '1' },
    exceed: async (relay) => {
      const headers = relay.headers(relay.player(), await relay.createKey(), 'throttle.example.net');
      (await relay.connect(headers)).close();
      return open(relay, headers);
    },
    status: 429,
    code: 'too_many_opens',
  },
];

/** The other side of the rule: what no client can fix by waiting its own turn is the relay's trouble. */
const trouble: Row[] = [
  {
    limit: 'session look-ups waiting, all addresses together',
    settings: { PROFILE_API_CONCURRENCY: '1', PROFILE_API_MAX_QUEUE: '1' },
    exceed: async (relay) => {
      await holdLookup(relay, '127.0.0.64');
      postFrom('127.0.0.65', relay.url, chat, junk()).catch(() => undefined);
      await eventually(async () => (await readMetrics(relay.url)).get('relay_session_lookups_waiting') === 1, 'the queue to be full');
      // Its address has no more waiting than any other: nobody's share is passed, the queue is full.
      return post(relay, '127.0.0.65', junk());
    },
    status: 503,
    code: 'profile_api_busy',
  },
  {
    limit: "the profile API's own rate limit (its 429)",
    settings: {},
    exceed: async (relay) => {
      relay.profile.setMode('rate-limited');
      return post(relay, '127.0.0.66', junk());
    },
    status: 503,
    code: 'profile_api_unavailable',
  },
];

let nats: TestNats;
beforeAll(async () => {
  nats = await startTestNats();
});
afterAll(async () => {
  await nats?.stop();
});

describe('a client over its share is throttled: 429, Retry-After, a code of its own; the relay in trouble says 503', () => {
  const named = [...throttles, ...trouble].map((row) => [`${row.limit}: ${row.status} ${row.code} with Retry-After`, row] as const);
  it.each(named)('%s', async (_name, row) => {
    const relay = await RelayFixture.start({ nats, env: row.settings });
    try {
      const answer = await row.exceed(relay);
      expect({ status: answer.status, error: answer.body['error'] }).toEqual({ status: row.status, error: row.code });
      expect(answer.body['message']).toEqual(expect.any(String));
      expect(answer.retryAfter).toMatch(/^[1-9]\d*$/);
      expect((await readMetrics(relay.url)).get(`relay_refusals_total{code="${row.code}"}`)).toBe(1);
      expect(relay.server.core.bans.list()).toEqual([]);
    } finally {
      relay.profile.setMode('normal');
      await relay.close();
    }
  });

  it('has a row for every throttle code of the catalogue (schemas/http-throttles.ts: 429 with Retry-After by its type)', () => {
    expect(new Set(throttles.map((r) => r.code))).toEqual(new Set(Object.keys(HTTP_THROTTLES)));
  });
});
