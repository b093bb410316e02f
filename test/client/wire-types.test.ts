// The client library's wire types are generated from schemas/: the committed file must be what the
// generator writes now, and the types must be the TypeBox definitions' own (checked by tsc: this file
// is part of `npm run typecheck`).
import { readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { CLOSE_REASONS as RELAY_CLOSE_REASONS, type CloseEvent as CloseEventSchema } from '../../schemas/close.js';
import type { Envelope as EnvelopeSchema } from '../../schemas/envelope.js';
import type { MetaFrame as MetaFrameSchema } from '../../schemas/meta.js';
import { PAYLOAD_TYPES as RELAY_PAYLOAD_TYPES } from '../../schemas/payload-types.js';
import type * as Relay from '../../schemas/payloads.js';
import { clientWireSchemas } from '../../scripts/client-schemas.js';
import { clientEventId } from '../../scripts/client-event-id.js';
import { clientStreamTimings } from '../../scripts/client-timings.js';
import { clientWireTypes } from '../../scripts/client-types.js';
import { STREAM_TIMINGS as RELAY_TIMINGS } from '../../schemas/stream-timings.js';
import { DEFAULT_BACKOFF } from '../../clients/typescript/src/backoff.js';
import { resolveOptions } from '../../clients/typescript/src/options.js';
import { refusal } from '../../clients/typescript/src/errors.js';
import { checkPair } from '../../clients/typescript/src/frames.js';
import { channelProblem, normaliseChannel } from '../../clients/typescript/src/channel.js';
import { channelProblem as relayChannelProblem, normaliseChannel as relayNormalise } from '../../services/core/channel.js';
import {
  CLOSE_REASONS,
  PAYLOAD_TYPES,
  RelayClient,
  type ChatComponent,
  type ChatPayload,
  type CloseEvent,
  type CloseReasonCode,
  type Envelope,
  type ErrorCode,
  type HttpErrorCode,
  type KnownCloseReason,
  type KnownHttpErrorCode,
  type Frame,
  type MetaFrame,
  type Payload,
  type PresencePayload,
} from '../../clients/typescript/src/index.js';
import type * as Wire from '../../clients/typescript/src/generated/wire.js';
import { validPayloads } from '../helpers/payloads.js';

describe('generated wire types', () => {
  it('are what scripts/generate-client-types.ts writes from schemas/ now (run npm run client-types when this fails)', () => {
    const committed = readFileSync(new URL('../../clients/typescript/src/generated/wire.ts', import.meta.url), 'utf8');
    expect(committed, 'clients/typescript/src/generated/wire.ts is stale: run npm run client-types').toBe(clientWireTypes());
  });

  it('schemas.ts (what delivered frames are checked against) is what the generator writes from schemas/ now', () => {
    const committed = readFileSync(new URL('../../clients/typescript/src/generated/schemas.ts', import.meta.url), 'utf8');
    expect(committed, 'clients/typescript/src/generated/schemas.ts is stale: run npm run client-types').toBe(clientWireSchemas());
  });

  it('timings.ts (the stream timings the library plans with) is what the generator writes from schemas/stream-timings.ts now', () => {
    const committed = readFileSync(new URL('../../clients/typescript/src/generated/timings.ts', import.meta.url), 'utf8');
    expect(committed, 'clients/typescript/src/generated/timings.ts is stale: run npm run client-types').toBe(clientStreamTimings());
  });

  it('event-id.ts (the ids the library keeps) is what the generator writes from schemas/event-id.ts now', () => {
    const committed = readFileSync(new URL('../../clients/typescript/src/generated/event-id.ts', import.meta.url), 'utf8');
    expect(committed, 'clients/typescript/src/generated/event-id.ts is stale: run npm run client-types').toBe(clientEventId());
  });

  it("the library's watchdog and back-off default to the relay's stream timings", () => {
    expect(DEFAULT_BACKOFF).toEqual({ baseMs: RELAY_TIMINGS.minRetryMs, capMs: RELAY_TIMINGS.backoffCapMs });
    const config = resolveOptions({ url: 'http://127.0.0.1:1', server: 'play.example.net', clientId: 'id', clientSecret: 'secret', userAgent: 'mod/1+0', token: () => 't' });
    expect(config.watchdogMs).toBe(RELAY_TIMINGS.watchdogMs);
    expect(config.backoff).toMatchObject(DEFAULT_BACKOFF);
  });

  it('let every example payload of the relay through, in its delivered form, and the relay keepalive frame', () => {
    const meta = { uuid: '3f1e8d2a-6b7c-4d5e-9f10-112233445566', agent: null, channel: 'play.example.net' };
    for (const [type, payload] of Object.entries(validPayloads())) expect(checkPair(meta, payload, 'play.example.net'), type).toMatchObject({ ok: true });
    expect(checkPair({ ...meta, uuid: '00000000-0000-0000-0000-000000000000', agent: 'relay' }, { type: 'keepalive' }, undefined)).toMatchObject({ ok: true });
  });

  it("the client's channel rules are the relay's (services/core/channel.ts)", () => {
    for (const name of ['Play.Example.NET', 'play.example.net:25565.', 'play.example.net:25566', '[2001:DB8::1]:25566', '[::1', 'plаy.example.net', 'ünïcode.net', 'a b', '', ' x ', 'x'.repeat(254)]) {
      expect(channelProblem(name) === null, name).toBe(relayChannelProblem(name) === null);
      if (channelProblem(name) === null) expect(normaliseChannel(name), name).toBe(relayNormalise(name));
    }
  });

  it('type close reasons and error codes as open sets: a value a newer relay adds is a string the types admit, the known ones stay named', () => {
    // Checked by tsc (npm run typecheck): a closed union here would not compile.
    expectTypeOf<'a_reason_added_later'>().toMatchTypeOf<CloseEvent['reason']>();
    expectTypeOf<'a_code_added_later'>().toMatchTypeOf<HttpErrorCode>();
    expectTypeOf<'evicted'>().toMatchTypeOf<KnownCloseReason>();
    expectTypeOf<'a_reason_added_later'>().not.toMatchTypeOf<KnownCloseReason>();
    expectTypeOf<'unauthorized'>().toMatchTypeOf<KnownHttpErrorCode>();
    // The library reports a close by the catalogue's reasons (an unknown one is unknown_close).
    expectTypeOf<CloseReasonCode>().toEqualTypeOf<KnownCloseReason>();
    const later = refusal(418, null, JSON.stringify({ error: 'a_code_added_later', message: 'new' }));
    const code: ErrorCode = later.code;
    expect(code).toBe('a_code_added_later');
  });

  it('carry the relay catalogues (payload types, close reasons) as values', () => {
    expect(PAYLOAD_TYPES).toEqual(RELAY_PAYLOAD_TYPES);
    expect(CLOSE_REASONS).toEqual(RELAY_CLOSE_REASONS);
  });

  it('are the TypeBox definitions, type for type', () => {
    expectTypeOf<Wire.ChatPayload>().toEqualTypeOf<Relay.ChatPayload>();
    expectTypeOf<Wire.DeathPayload>().toEqualTypeOf<Relay.DeathPayload>();
    expectTypeOf<Wire.EntityOwnerPayload>().toEqualTypeOf<Relay.EntityOwnerPayload>();
    expectTypeOf<Wire.KeepalivePayload>().toEqualTypeOf<Relay.KeepalivePayload>();
    expectTypeOf<Wire.LoginPayload>().toEqualTypeOf<Relay.LoginPayload>();
    expectTypeOf<Wire.LogoutPayload>().toEqualTypeOf<Relay.LogoutPayload>();
    expectTypeOf<Wire.MessagePayload>().toEqualTypeOf<Relay.MessagePayload>();
    expectTypeOf<Wire.MinigamePayload>().toEqualTypeOf<Relay.MinigamePayload>();
    expectTypeOf<Wire.PingPayload>().toEqualTypeOf<Relay.PingPayload>();
    expectTypeOf<Wire.PresencePayload>().toEqualTypeOf<Relay.PresencePayload>();
    expectTypeOf<Wire.ResendRequestPayload>().toEqualTypeOf<Relay.ResendRequestPayload>();
    expectTypeOf<Payload>().toEqualTypeOf<Relay.Payload>();
    expectTypeOf<MetaFrame>().toEqualTypeOf<MetaFrameSchema>();
    expectTypeOf<CloseEvent>().toEqualTypeOf<Static<typeof CloseEventSchema>>();
    // The generated envelope also says what TypeBox's static type cannot: agent or userAgent is present.
    expectTypeOf<Envelope>().toMatchTypeOf<EnvelopeSchema>();
    expectTypeOf<{ user: string; message: ChatPayload }>().not.toMatchTypeOf<Envelope>();
    // Every example payload of the relay's own tests is a Payload.
    const examples = validPayloads();
    expect(Object.keys(examples).sort()).toEqual([...PAYLOAD_TYPES].sort());
  });

  it('narrow a delivered payload by its type', () => {
    const seen: string[] = [];
    const client = new RelayClient({
      url: 'http://127.0.0.1:9',
      server: 'play.example.net',
      clientId: 'id',
      clientSecret: 'secret',
      userAgent: 'test/1+0',
      token: () => 'token',
    });
    client.on('payload', ({ payload, meta }: Frame) => {
      if (payload.type === 'chat') {
        expectTypeOf(payload).toEqualTypeOf<ChatPayload>();
        expectTypeOf(payload.message).toEqualTypeOf<ChatComponent>();
        seen.push(`${meta.uuid}: ${typeof payload.message === 'string' ? payload.message : JSON.stringify(payload.message)}`);
      } else if (payload.type === 'presence') {
        expectTypeOf(payload).toEqualTypeOf<PresencePayload>();
        seen.push(`health ${payload.attributes.health}`);
      }
    });
    expect(client.state.state).toBe('closed');
    expect(seen).toEqual([]);
  });
});
