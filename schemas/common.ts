// Shapes shared by several payloads (spec 2.3), with every constraint the spec gives. Schemas
// describe what ingress accepts; the documented normalisation (validate.ts) then produces the
// canonical form that is stored and delivered.

import { Type, type Static } from '@sinclair/typebox';

/** A UUID, dashed or undashed, any case; normalised to dashed lower case at ingress. */
export const Uuid = Type.String({
  pattern: '^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})$',
  description: 'A UUID, dashed or undashed; delivered in dashed lower-case form.',
  'x-expected': 'a UUID',
});

/** A player name as the game allows it (spec 2.3). */
export const PLAYER_NAME_PATTERN = '^[A-Za-z0-9_]{3,16}$';

/** Player (full object): identity lives in `uuid`. */
export const Player = Type.Object(
  {
    uuid: Uuid,
    name: Type.String({
      minLength: 3,
      maxLength: 16,
      pattern: PLAYER_NAME_PATTERN,
      'x-expected': '3 to 16 characters, each a letter, digit or underscore',
    }),
  },
  { additionalProperties: false, description: 'Player (full object).' },
);
export type Player = Static<typeof Player>;

/** Player (bare form): a plain UUID string. */
export const PlayerBare = Uuid;

function caseInsensitive(words: readonly string[]): string {
  const alt = words.map((w) => [...w].map((c) => `[${c}${c.toUpperCase()}]`).join(''));
  return `^(?:${alt.join('|')})$`;
}

export const DIMENSIONS = ['overworld', 'nether', 'end'] as const;
export const Dimension = Type.String({
  pattern: caseInsensitive(DIMENSIONS),
  description: 'overworld, nether or end; case-insensitive at ingress, lower-cased in transit.',
  'x-expected': 'overworld, nether or end',
});

export const COORDINATE_LIMIT = 30_000_000;
export const MIN_Y = -64;

const positionFields = {
  x: Type.Number({ minimum: -COORDINATE_LIMIT, maximum: COORDINATE_LIMIT }),
  y: Type.Number({ minimum: MIN_Y }),
  z: Type.Number({ minimum: -COORDINATE_LIMIT, maximum: COORDINATE_LIMIT }),
  dimension: Dimension,
};

export const Position = Type.Object(positionFields, { additionalProperties: false });
export type Position = Static<typeof Position>;

export const POSTURES = ['standing', 'sneaking', 'swimming'] as const;

/** logout's final position: Position plus posture. */
export const LogoutPosition = Type.Object(
  {
    ...positionFields,
    // An enum rather than a union of consts: generators make it an enum type, not an Object.
    phase: Type.Unsafe<(typeof POSTURES)[number]>({ type: 'string', enum: [...POSTURES], title: 'Posture' }),
    pitch: Type.Number({ minimum: -90, maximum: 90 }),
    yaw: Type.Number(),
  },
  { additionalProperties: false },
);
export type LogoutPosition = Static<typeof LogoutPosition>;

export const Enchantment = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 256 }), level: Type.Integer() },
  { additionalProperties: false },
);

export const ItemStack = Type.Object(
  {
    id: Type.String({
      pattern: '^[a-z0-9_.-]+:[a-z0-9_./-]+$',
      maxLength: 256,
      description: 'Registry id <namespace>:<item_name>.',
      'x-expected': 'a registry id like minecraft:stone',
    }),
    count: Type.Integer({ minimum: 1 }),
    damage: Type.Optional(Type.Integer({ minimum: 0 })),
    maxDamage: Type.Optional(Type.Integer({ minimum: 0 })),
    enchantments: Type.Optional(Type.Array(Enchantment, { maxItems: 256 })),
    name: Type.Optional(Type.String({ maxLength: 4096 })),
    nbt: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Arbitrary component data, relayed as is; its numbers finite and its depth within the payload bound.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ItemStack = Static<typeof ItemStack>;

export const InventorySlot = Type.Object(
  { slot: Type.Integer({ minimum: 0 }), item: ItemStack },
  { additionalProperties: false },
);
export type InventorySlot = Static<typeof InventorySlot>;

/**
 * How deep a payload may nest, the payload object itself being level 1 (an envelope's payload is
 * counted the same way). Deep values overflow JSON.stringify here and parsers at the receivers.
 */
export const ENTRY_MAX_DEPTH = 32;

/** The bounds every payload meets, free-form members included; stated in every generated schema. */
export const ENTRY_BOUNDS = `Every number in it is finite (a literal like 1e400 is refused), and it nests at most ${ENTRY_MAX_DEPTH} levels deep, counting the payload object as level 1.`;

export const CHAT_MAX_BYTES = 32 * 1024;
export const CHAT_MAX_DEPTH = 16;

/** A chat component: plain text, or a JSON text component (object or array), bounded in depth and size. */
export const ChatComponent = Type.Union(
  [
    Type.String({ maxLength: CHAT_MAX_BYTES }),
    Type.Record(Type.String(), Type.Unknown()),
    Type.Array(Type.Unknown()),
  ],
  {
    description: `Plain text or a JSON text component; at most ${CHAT_MAX_DEPTH} levels deep and ${CHAT_MAX_BYTES} bytes as JSON, every number finite.`,
  },
);

/** The sender's clock in epoch milliseconds, relayed untouched. */
export const Timestamp = Type.Integer({ format: 'int64', description: 'Epoch milliseconds on the sender clock; never interpreted.' });
