// Records the relay keeps in NATS KV. Read back through these schemas so a hand-edited or
// foreign value is ignored with a warning instead of crashing a node.

import { Type, type Static } from '@sinclair/typebox';

export const KeyRecord = Type.Object({
  clientId: Type.String(),
  /** SHA-256 of the secret, hex. The secret itself is shown once, at creation, and never stored. */
  secretSha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  scopes: Type.Array(Type.String()),
  label: Type.Optional(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
  revokedAt: Type.Optional(Type.String({ format: 'date-time' })),
});
export type KeyRecord = Static<typeof KeyRecord>;

export const BanRecord = Type.Object({
  uuid: Type.String(),
  reason: Type.String(),
  bannedAt: Type.String({ format: 'date-time' }),
  /** What issued it: "relay" for an automatic A3 ban, "cli" for an operator. */
  by: Type.String(),
  /** What a cracked client presented, its control characters as visible escapes (\x9b). */
  clientId: Type.Optional(Type.String()),
  userAgent: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
});
export type BanRecord = Static<typeof BanRecord>;

export const StreamClaim = Type.Object({
  node: Type.String(),
  conn: Type.String(),
  /** The account; null for a bridge stream opened without a session. */
  uuid: Type.Union([Type.String(), Type.Null()]),
  /** The readable channel; null for a bridge stream hearing every channel. */
  channel: Type.Union([Type.String(), Type.Null()]),
  clientId: Type.String(),
  openedAt: Type.String({ format: 'date-time' }),
  /** The stream's User-Agent (services/core/user-agent.ts: the text rule holds), as the console shows it. */
  agent: Type.Optional(Type.String()),
});
export type StreamClaim = Static<typeof StreamClaim>;

export const NodeRecord = Type.Object({
  node: Type.String(),
  /** The service: ingress, gateway, all or admin. */
  role: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  heartbeatAt: Type.String({ format: 'date-time' }),
  // What the console shows of a node; optional, so nodes of an older release still count as alive.
  /** How often the node beats, in ms: three missed beats and the console calls it silent. */
  beatMs: Type.Optional(Type.Integer({ minimum: 1 })),
  version: Type.Optional(Type.String()),
  /** Connected to NATS and not draining. */
  ready: Type.Optional(Type.Boolean()),
  streams: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Counters since the node started: frames written to streams, entries stored by POSTs. */
  framesDelivered: Type.Optional(Type.Integer({ minimum: 0 })),
  entriesPublished: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type NodeRecord = Static<typeof NodeRecord>;

/** What an operator did, kept in the RELAY_AUDIT stream: never a secret, only what was changed. */
export const AUDIT_ACTIONS = ['key.create', 'key.revoke', 'ban.add', 'ban.remove'] as const;
export const AuditRecord = Type.Object({
  at: Type.String({ format: 'date-time' }),
  /** Who did it: RELAY_ACTOR, else the operating-system user and host the CLI ran as. */
  actor: Type.String(),
  action: Type.Union(AUDIT_ACTIONS.map((a) => Type.Literal(a))),
  /** The key's client id or the account's uuid. */
  target: Type.String(),
  label: Type.Optional(Type.String()),
  scopes: Type.Optional(Type.Array(Type.String())),
  reason: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
});
export type AuditRecord = Static<typeof AuditRecord>;
