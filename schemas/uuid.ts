// UUIDs travel in lower-case dashed form everywhere: on input, in NATS headers and on the wire.

const DASHED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const UNDASHED = /^[0-9a-fA-F]{32}$/;

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Dashed lower case, or null when the string is not a UUID (dashed or the undashed 32-hex form). */
export function normaliseUuid(value: string): string | null {
  if (DASHED.test(value)) return value.toLowerCase();
  if (UNDASHED.test(value)) {
    const v = value.toLowerCase();
    return `${v.slice(0, 8)}-${v.slice(8, 12)}-${v.slice(12, 16)}-${v.slice(16, 20)}-${v.slice(20)}`;
  }
  return null;
}
