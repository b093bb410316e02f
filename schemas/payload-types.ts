// The eleven payload types of spec 2.1, discriminated on `type`. Their order fixes the bit each
// type has in a scope mask; append, never reorder.
export const PAYLOAD_TYPES = [
  'chat',
  'death',
  'entity_owner',
  'keepalive',
  'login',
  'logout',
  'message',
  'minigame',
  'ping',
  'presence',
  'resend_request',
] as const;

export type PayloadType = (typeof PAYLOAD_TYPES)[number];

const TYPE_SET: ReadonlySet<string> = new Set(PAYLOAD_TYPES);

export function isPayloadType(value: unknown): value is PayloadType {
  return typeof value === 'string' && TYPE_SET.has(value);
}

/** entity_owner -> EntityOwnerPayload: the name of its schema, component and generated class. */
export function payloadComponentName(type: PayloadType): string {
  return `${type.split('_').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}Payload`;
}
