// Scopes decide everything a key may do (spec 5.4). They are compiled once into bit masks over the
// eleven payload types so that the gateway's per-frame filter is a bit test.

import { PAYLOAD_TYPES, type PayloadType } from '../../schemas/payload-types.js';

export const Scope = {
  Establish: 'irc.connection.establish',
  Unauthenticated: 'irc.connection.unauthenticated',
  Send: 'irc.messages.send',
  Receive: 'irc.messages.receive',
} as const;

/** Each payload type's bit in the send and receive masks; a string that is not a type has none. */
export const TYPE_BIT: ReadonlyMap<string, number> = new Map(PAYLOAD_TYPES.map((t, i) => [t, 1 << i]));
const ALL_TYPES_MASK = (1 << PAYLOAD_TYPES.length) - 1;

/** Every scope a key can hold, narrowed forms included. */
export const ALL_SCOPES: readonly string[] = [
  Scope.Establish,
  Scope.Unauthenticated,
  Scope.Send,
  ...PAYLOAD_TYPES.map((t) => `${Scope.Send}.${t}`),
  Scope.Receive,
  ...PAYLOAD_TYPES.map((t) => `${Scope.Receive}.${t}`),
];
const KNOWN = new Set(ALL_SCOPES);

export function unknownScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !KNOWN.has(s));
}

export function typeBit(type: PayloadType): number {
  return TYPE_BIT.get(type)!;
}

export class ScopeSet {
  readonly scopes: readonly string[];
  readonly establish: boolean;
  readonly unauthenticated: boolean;
  readonly sendMask: number;
  readonly receiveMask: number;

  constructor(scopes: readonly string[]) {
    this.scopes = scopes;
    const set = new Set(scopes);
    this.establish = set.has(Scope.Establish);
    this.unauthenticated = set.has(Scope.Unauthenticated);
    this.sendMask = maskFor(set, Scope.Send);
    this.receiveMask = maskFor(set, Scope.Receive);
  }

  canSend(type: PayloadType): boolean {
    return (this.sendMask & typeBit(type)) !== 0;
  }
}

function maskFor(set: ReadonlySet<string>, base: string): number {
  if (set.has(base)) return ALL_TYPES_MASK;
  let mask = 0;
  for (const t of PAYLOAD_TYPES) if (set.has(`${base}.${t}`)) mask |= typeBit(t);
  return mask;
}
