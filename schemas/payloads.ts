// The eleven payloads (spec 2.1, 2.2; open fields decided in DESIGN.md section 3). Known fields are
// validated strictly; unknown ones are stripped at ingress (additionalProperties: false + ajv's
// removeAdditional), except inside the free-form members (nbt, gamedata, chat components).

import { Type, type Static, type TObject } from '@sinclair/typebox';
import {
  ChatComponent,
  ENTRY_BOUNDS,
  InventorySlot,
  LogoutPosition,
  Player,
  PlayerBare,
  Position,
  Timestamp,
  Uuid,
} from './common.js';
import { payloadComponentName, type PayloadType } from './payload-types.js';

const strict = { additionalProperties: false } as const;
// Every payload's own description states the bounds, so each generated schema file carries them.
const payload = { ...strict, description: ENTRY_BOUNDS } as const;
/** The `type` const, titled so generators name its enum (ChatPayloadType) instead of numbering it. */
const tag = <T extends PayloadType>(type: T) => Type.Literal(type, { title: `${payloadComponentName(type)}Type` });
const pops = Type.Integer({ minimum: 0, description: 'Totems popped.' });

export const ChatPayload = Type.Object({ type: tag('chat'), message: ChatComponent }, payload);

export const DeathPayload = Type.Object(
  {
    type: tag('death'),
    player: Player,
    pops: Type.Optional(pops),
    timestamp: Type.Optional(Timestamp),
    position: Type.Optional(Position),
  },
  payload,
);

export const EntityOwnerPayload = Type.Object(
  { type: tag('entity_owner'), id: Type.String({ minLength: 1, maxLength: 64 }), owner: Player },
  payload,
);

export const KeepalivePayload = Type.Object({ type: tag('keepalive') }, payload);

export const LoginPayload = Type.Object(
  { type: tag('login'), player: Player, timestamp: Type.Optional(Timestamp) },
  payload,
);

export const LogoutPayload = Type.Object(
  {
    type: tag('logout'),
    player: Player,
    inventory: Type.Optional(Type.Array(InventorySlot, { maxItems: 6 })),
    pops: Type.Optional(pops),
    timestamp: Type.Optional(Timestamp),
    position: Type.Optional(LogoutPosition),
  },
  payload,
);

export const MessagePayload = Type.Object(
  { type: tag('message'), message: ChatComponent, to: Uuid },
  { ...payload, description: `A direct message: delivered to the player named by \`to\` (and to bridges). ${ENTRY_BOUNDS}` },
);

export const MinigamePayload = Type.Object(
  {
    type: tag('minigame'),
    game: Type.String({ minLength: 1, maxLength: 64 }),
    gamedata: Type.Optional(Type.Unknown({ description: 'Any JSON, relayed as is; its numbers finite and its depth within the payload bound.' })),
  },
  payload,
);

export const PingPayload = Type.Object(
  {
    type: tag('ping'),
    player: PlayerBare,
    position: Position,
    color: Type.Optional(Type.String({ pattern: '^#[0-9a-fA-F]{6}$', 'x-expected': 'a colour like #ff8800' })),
    duration: Type.Optional(Type.Number({ minimum: 0 })),
  },
  payload,
);

export const Attributes = Type.Object(
  {
    absorption: Type.Number(),
    health: Type.Number(),
    hunger: Type.Number(),
    oxygen: Type.Number(),
    saturation: Type.Number(),
  },
  strict,
);

export const PresencePayload = Type.Object(
  {
    type: tag('presence'),
    inventory: Type.Array(InventorySlot, { maxItems: 256 }),
    attributes: Attributes,
  },
  payload,
);

export const RESENDABLE = ['presence', 'logout', 'entity_owner'] as const;
export const ResendRequestPayload = Type.Object(
  {
    type: tag('resend_request'),
    include: Type.Optional(
      Type.Array(Type.Unsafe<(typeof RESENDABLE)[number]>({ type: 'string', enum: [...RESENDABLE], title: 'ResendableType' }), {
        maxItems: RESENDABLE.length,
        uniqueItems: true,
      }),
    ),
  },
  payload,
);

export const PAYLOAD_SCHEMAS = {
  chat: ChatPayload,
  death: DeathPayload,
  entity_owner: EntityOwnerPayload,
  keepalive: KeepalivePayload,
  login: LoginPayload,
  logout: LogoutPayload,
  message: MessagePayload,
  minigame: MinigamePayload,
  ping: PingPayload,
  presence: PresencePayload,
  resend_request: ResendRequestPayload,
} as const satisfies Record<PayloadType, TObject>;

const PayloadUnion = Type.Union(Object.values(PAYLOAD_SCHEMAS));

/**
 * A oneOf (the members exclude each other by their `type` const) with a discriminator: generators
 * such as Modelina build a tagged union from it, and ignore a discriminator beside anyOf. The
 * documents add the mapping (its form differs between AsyncAPI, OpenAPI and JSON Schema); ingress
 * validates each payload by its own type, never through this union.
 */
export const Payload = Type.Unsafe<Static<typeof PayloadUnion>>({
  oneOf: PayloadUnion.anyOf,
  discriminator: { propertyName: 'type' },
  description: `One of the eleven payload types, discriminated on \`type\`. ${ENTRY_BOUNDS}`,
});

export type ChatPayload = Static<typeof ChatPayload>;
export type DeathPayload = Static<typeof DeathPayload>;
export type EntityOwnerPayload = Static<typeof EntityOwnerPayload>;
export type KeepalivePayload = Static<typeof KeepalivePayload>;
export type LoginPayload = Static<typeof LoginPayload>;
export type LogoutPayload = Static<typeof LogoutPayload>;
export type MessagePayload = Static<typeof MessagePayload>;
export type MinigamePayload = Static<typeof MinigamePayload>;
export type PingPayload = Static<typeof PingPayload>;
export type PresencePayload = Static<typeof PresencePayload>;
export type ResendRequestPayload = Static<typeof ResendRequestPayload>;
export type Payload = Static<typeof Payload>;
