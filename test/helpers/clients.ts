// What a real client sends: a player with a live session at the (fake) profile API, and the headers
// of spec 5.1. Shared by the in-process fixture and the multi-process mesh.
import { request } from 'node:http';
import type { CreatedKey } from '../../services/core/keys.js';
import type { FakeProfileApi } from './profile-api.js';

export interface Player {
  name: string;
  uuid: string;
  token: string;
}

export const TEST_AGENT = 'testmod/1.0.0+0123456789abcdef0123456789abcdef01234567';

let names = 0;

export function newPlayer(profile: FakeProfileApi, name?: string): Player {
  const n = name ?? `Player${++names}${Math.floor(Math.random() * 1000)}`;
  const token = `token-${n}-${Math.random().toString(36).slice(2)}`;
  return { name: n, uuid: profile.addSession(token, n), token };
}

export function clientHeaders(
  player: Player | null,
  key: CreatedKey | null,
  channel?: string | null,
  extra: Record<string, string> = {},
): Record<string, string> {
  const h: Record<string, string> = { 'user-agent': TEST_AGENT };
  if (player !== null) h['authorization'] = `Bearer ${player.token}`;
  if (key !== null) {
    h['client-id'] = key.clientId;
    h['client-secret'] = key.clientSecret;
  }
  if (channel !== undefined && channel !== null) h['x-irc-multiplayer-server'] = channel;
  return { ...h, ...extra };
}

export interface PostResult {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export async function postTo(baseUrl: string, body: unknown, headers: Record<string, string>, path = '/'): Promise<PostResult> {
  const res = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * A POST from a chosen client address: 127.0.0.2 to .254 are distinct clients on loopback (the
 * relay's fairness counts by address). Plain node:http, one connection per request.
 */
export function postFrom(localAddress: string, baseUrl: string, body: unknown, headers: Record<string, string>, path = '/'): Promise<PostResult> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, baseUrl),
      { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } },
      (res) => {
        let answer = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (answer += c));
        res.once('error', reject);
        res.once('end', () => {
          let parsed: Record<string, unknown>;
          try {
            parsed = JSON.parse(answer) as Record<string, unknown>;
          } catch {
            parsed = { raw: answer };
          }
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out.set(k, v);
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: out });
        });
      },
    );
    req.once('error', reject);
    req.end(text);
  });
}
