// Frames recorded from a real relay, byte for byte, for tests that read them as a client in another
// language would: a data event of every payload type, the meta frames (a player's and the server
// keepalive's), close events, and the JSON bodies of refused POSTs and GETs.

import { Scope } from '../../services/core/scopes.js';
import { PAYLOAD_TYPES } from '../../schemas/payload-types.js';
import { validPayloads } from './payloads.js';
import type { RelayFixture } from './relay.js';
import type { SseStream } from './sse-client.js';

export type FrameKind = 'payload' | 'meta' | 'close' | 'error';

export interface RecordedFrame {
  kind: FrameKind;
  /** What it is: the payload type, the close reason or the error code. */
  label: string;
  /** The exact text the relay sent (the SSE data, or the response body). */
  text: string;
}

/** Every payload of the same type the relay accepts, with 64-bit timestamps where the type has one. */
function examples(receiver: string): Record<string, Record<string, unknown>> {
  const all = validPayloads();
  return { ...all, message: { ...all['message'], to: receiver } };
}

async function closeText(s: SseStream): Promise<string> {
  await s.closeEvent();
  return s.events.find((e) => e.event === 'close')!.data;
}

async function refusedPost(relay: RelayFixture, code: string, body: string, headers: Record<string, string>, init: RequestInit = {}): Promise<RecordedFrame> {
  const res = await fetch(new URL('/', relay.url), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, ...init });
  const text = await res.text();
  const error = (JSON.parse(text) as { error: string }).error;
  if (res.status < 400 || error !== code) throw new Error(`expected a refusal ${code}, got ${res.status} ${text}`);
  return { kind: 'error', label: code, text };
}

/**
 * Records the frames on `relay`, which must have BATCH_MAX_ENTRIES 2 and a short KEEPALIVE_INTERVAL.
 * It drains the relay's gateway at the end (for the draining close event): start one for it alone.
 */
export async function recordFrames(relay: RelayFixture): Promise<RecordedFrame[]> {
  const frames: RecordedFrame[] = [];
  const key = await relay.createKey();
  const channel = 'java.example.net';
  const listener = relay.player();
  const sender = relay.player();
  const stream = await relay.connect(relay.headers(listener, key, channel));

  for (const payload of Object.values(examples(listener.uuid))) {
    const res = await relay.post(payload, relay.headers(sender, key, channel));
    if (res.status !== 200) throw new Error(`${JSON.stringify(payload)} refused: ${JSON.stringify(res.body)}`);
  }
  const seen = new Set<string>();
  while (seen.size < PAYLOAD_TYPES.length) {
    const meta = await stream.nextEvent();
    const data = await stream.nextEvent();
    const type = (JSON.parse(data.data) as { type: string }).type;
    const fromServer = (JSON.parse(meta.data) as { uuid: string }).uuid === '00000000-0000-0000-0000-000000000000';
    if (fromServer) {
      // Both halves, as after the payloads below: a keepalive that came first (a slow machine) must
      // not leave the recording without its payload frame.
      if (!frames.some((f) => f.label === 'server keepalive')) frames.push({ kind: 'meta', label: 'server keepalive', text: meta.data }, { kind: 'payload', label: 'server keepalive', text: data.data });
      continue;
    }
    if (seen.size === 0) frames.push({ kind: 'meta', label: 'player', text: meta.data });
    seen.add(type);
    frames.push({ kind: 'payload', label: type, text: data.data });
  }
  // The server keepalive pair, unless it came between the payloads already.
  while (!frames.some((f) => f.label === 'server keepalive')) {
    const meta = await stream.nextEvent();
    const data = await stream.nextEvent();
    frames.push({ kind: 'meta', label: 'server keepalive', text: meta.data }, { kind: 'payload', label: 'server keepalive', text: data.data });
  }

  const h = relay.headers(sender, key, channel);
  const bridge = await relay.createKey([Scope.Unauthenticated, Scope.Establish, Scope.Send, Scope.Receive]);
  const presenceOnly = await relay.createKey([Scope.Establish, `${Scope.Send}.presence`]);
  const chat = JSON.stringify({ type: 'chat', message: 'hi' });
  frames.push(
    await refusedPost(relay, 'invalid_json', '{"type":', h),
    await refusedPost(relay, 'invalid_payload', JSON.stringify({ type: 'death', player: { uuid: 'nope', name: 'x' } }), h),
    await refusedPost(relay, 'unknown_type', JSON.stringify({ type: 'teleport' }), h),
    await refusedPost(relay, 'batch_too_large', JSON.stringify([{ type: 'keepalive' }, { type: 'keepalive' }, { type: 'keepalive' }]), h),
    await refusedPost(relay, 'unsupported_media_type', chat, { ...h, 'content-type': 'text/plain' }),
    await refusedPost(relay, 'invalid_channel', chat, { ...h, 'x-irc-multiplayer-server': 'not a host!' }),
    await refusedPost(relay, 'sender_required', chat, relay.headers(null, bridge, channel)),
    await refusedPost(relay, 'unauthorized', chat, relay.headers(null, null, channel)),
    await refusedPost(relay, 'invalid_session', chat, { ...h, authorization: 'Bearer no-such-session' }),
    await refusedPost(relay, 'missing_scope', chat, relay.headers(sender, presenceOnly, channel)),
  );
  // A valid session without the client credentials bans the account (spec A3); it is refused from then on.
  const banned = relay.player();
  await relay.post(chat, relay.headers(banned, null, channel));
  frames.push(await refusedPost(relay, 'banned', chat, relay.headers(banned, key, channel)));
  const refusedGet = await relay.open(relay.headers(listener, key, null));
  const missing = await refusedGet.refusal();
  frames.push({ kind: 'error', label: missing.body.error, text: JSON.stringify(missing.body) });

  // A second stream of the same account evicts the first; draining ends the second (retryAfterMs).
  const second = await relay.connect(relay.headers(listener, key, channel));
  frames.push({ kind: 'close', label: 'evicted', text: await closeText(stream) });
  await relay.server.gateway!.drain();
  frames.push({ kind: 'close', label: 'draining', text: await closeText(second) });
  return frames;
}
