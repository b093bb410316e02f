// What can be a session token at all, decided before anything is asked of the profile API: a token
// that cannot be one costs no look-up, no place in the look-up gate, and no cache entry.
//
// Game access tokens are JWTs: base64url segments and dots, a few hundred characters to about 2 KB.
// 4096 leaves room for a token twice today's largest; beyond it a "token" is padding meant to cost
// us (hashing, the profile API's time). The alphabet is RFC 6750's b64token, which every bearer
// token is written in. Offline mode's `offline:<name>` never reaches this check (offline.ts).

/** Longest bearer token looked up, in characters. */
export const MAX_BEARER_TOKEN_CHARS = 4096;

const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export const TOKEN_SHAPE_PROBLEMS = ['token_too_long', 'token_malformed'] as const;
export type TokenShapeProblem = (typeof TOKEN_SHAPE_PROBLEMS)[number];

/** Why `token` cannot be a session token, or null when it may be one. */
export function tokenShapeProblem(token: string): TokenShapeProblem | null {
  if (token.length > MAX_BEARER_TOKEN_CHARS) return 'token_too_long';
  return B64TOKEN.test(token) ? null : 'token_malformed';
}
