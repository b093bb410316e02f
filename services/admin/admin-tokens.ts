// Who is signing in: the bearer token of a request, compared with every admin token in constant
// time (digests of equal length, every token compared whatever matched), so neither timing nor an
// early exit tells an attacker how much of a guess was right. A match names the operator.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { NamedToken } from '../core/config/admin-tokens.js';
import { AdminError } from './admin-error.js';

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** A signed-in operator; only AdminTokens makes one, and never with an empty name. */
export class Operator {
  readonly name: string;

  constructor(name: string) {
    if (name === '') throw new Error('An admin token has no name.');
    this.name = name;
  }

  /** How the audit trail and the ban records name this operator. */
  get actor(): string {
    return `admin-api:${this.name}`;
  }
}

export class AdminTokens {
  private readonly known: { operator: Operator; digest: Buffer }[];

  constructor(tokens: readonly NamedToken[]) {
    this.known = tokens.map((t) => ({ operator: new Operator(t.name), digest: digest(t.token) }));
  }

  /** The operator, or the refusal (no header, or not a token of ours). */
  operator(authorization: string | undefined): Operator {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (match === null) throw new AdminError('admin_token_required', 'Send Authorization: Bearer <admin token>.');
    const presented = digest(match[1] ?? '');
    let operator: Operator | null = null;
    for (const k of this.known) if (timingSafeEqual(k.digest, presented)) operator ??= k.operator;
    if (operator === null) throw new AdminError('admin_token_invalid', 'That is not an admin token of this mesh.');
    return operator;
  }
}
