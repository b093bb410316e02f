// The admin service's bearer tokens: ADMIN_TOKEN (named "admin") and ADMIN_TOKENS (name=token, ...),
// so the audit trail can say which operator acted. Problems name the variable and the token's name,
// never a token.

export interface NamedToken {
  name: string;
  token: string;
}

/** Shorter tokens are guessable by anyone who can reach the port. */
export const ADMIN_TOKEN_MIN_LENGTH = 24;
const NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

export function parseAdminTokens(single: string, several: string): { tokens: NamedToken[]; problems: string[] } {
  const tokens: NamedToken[] = [];
  const problems: string[] = [];
  if (single !== '') tokens.push({ name: 'admin', token: single });
  for (const [i, item] of several.split(',').entries()) {
    if (item.trim() === '') continue;
    const eq = item.indexOf('=');
    const name = eq < 0 ? '' : item.slice(0, eq).trim();
    if (!NAME.test(name)) {
      problems.push(`ADMIN_TOKENS item ${i + 1} must be name=token, the name made of letters, digits, "_", ".", "@" and "-" (at most 64).`);
      continue;
    }
    tokens.push({ name, token: item.slice(eq + 1).trim() });
  }
  const seen = new Set<string>();
  for (const t of tokens) {
    const which = t === tokens[0] && single !== '' ? 'ADMIN_TOKEN' : `The admin token named "${t.name}" in ADMIN_TOKENS`;
    if (t.token.length < ADMIN_TOKEN_MIN_LENGTH) problems.push(`${which} is shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters; use a long random one (openssl rand -hex 24).`);
    if (seen.has(t.name)) problems.push(`Two admin tokens are named "${t.name}"; each name says who acted, so it must be unique.`);
    seen.add(t.name);
  }
  return { tokens, problems };
}
