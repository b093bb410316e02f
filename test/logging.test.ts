// Logs: JSON lines with a per-request id, secret headers redacted wherever they are logged,
// repeated warnings throttled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayFixture } from './helpers/relay.js';

let relay: RelayFixture;

beforeAll(async () => {
  relay = await RelayFixture.start({ env: { LOG_LEVEL: 'debug', CLIENT_HEADER_PREFIXES: 'X-Hackware', PROFILE_API_TIMEOUT: '200ms' } });
});
afterAll(async () => {
  await relay?.close();
});

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  headers?: Record<string, string>;
  suppressed?: number;
}
const lines = (): Line[] => relay.logs.lines.map((l) => JSON.parse(l) as Line);

describe('logging', () => {
  it('a refused request is logged with its request id and headers, every secret header redacted', async () => {
    const key = await relay.createKey();
    const p = relay.player();
    const headers = relay.headers(p, null, 'logs.example.net', {
      'X-Hackware-Client-ID': key.clientId,
      'X-Hackware-Client-Secret': key.clientSecret,
      'Client-Secret': 'also-secret',
      Cookie: 'session=abc',
    });
    const res = await relay.post({ type: 'nope' }, headers);
    expect(res.status).toBe(400);
    const refused = lines().filter((l) => l.msg === 'refused' && l.headers?.['x-hackware-client-id'] === key.clientId);
    expect(refused).toHaveLength(1);
    const line = refused[0]!;
    expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/);
    expect(line.headers).toMatchObject({
      authorization: '[redacted]',
      'x-hackware-client-secret': '[redacted]',
      'client-secret': '[redacted]',
      cookie: '[redacted]',
      'x-irc-multiplayer-server': 'logs.example.net',
    });
    expect(relay.logs.text).not.toContain(p.token);
    expect(relay.logs.text).not.toContain(key.clientSecret);
  });

  it('logs are one JSON object per line, with level, time, node and service', () => {
    const first = JSON.parse(relay.logs.lines[0]!) as Record<string, unknown>;
    expect(first).toMatchObject({ level: expect.any(Number), time: expect.any(Number), node: relay.server.config.nodeId, service: 'all' });
  });

  it('a warning that repeats per request is written once per interval, not once per request', async () => {
    const key = await relay.createKey();
    relay.profile.setMode('down');
    try {
      for (let i = 0; i < 20; i++) {
        const res = await relay.post({ type: 'keepalive' }, relay.headers(relay.player(), key, 'logs.example.net'));
        expect(res.status).toBe(503);
      }
    } finally {
      relay.profile.setMode('normal');
    }
    expect(lines().filter((l) => l.msg === 'profile API failed')).toHaveLength(1);
  });
});
