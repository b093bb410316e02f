// Whom a request or a stream counts against: its account, or, for a client without a session (a
// bridge's API key), the key, as `key:<clientId>`. The ingress's rate limits and Idempotency-Key
// records, the open rate of streams, the registry and the stream caps all count by this one name.

/** The owner of what a client does: `account` null means it has no session. */
export function ownerOf(who: { readonly account: string | null; readonly clientId: string }): string {
  return who.account ?? `key:${who.clientId}`;
}
