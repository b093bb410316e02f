// The relay's channel rules (services/core/channel.ts), for the client: a server name the relay
// would refuse is refused at construction (a name outside Latin-1 made every request throw inside
// fetch, retried for ever), and the meta frames of a stream are compared with the name as the relay
// normalises it. Kept in step with the relay by a test (test/client/frames.test.ts).

const DEFAULT_PORT_SUFFIX = ':25565';
const MAX_LENGTH = 253;
const HOST_PATTERN = /^[a-z0-9._:-]+$/;
const IPV6_PATTERN = /^\[[0-9a-f:.]+\](?::[0-9]{1,5})?$/;

/** Trimmed, lower-cased, the default port and trailing dots removed until neither is left. */
export function normaliseChannel(raw: string): string {
  let name = raw.trim().toLowerCase();
  for (;;) {
    const before = name;
    if (name.endsWith(DEFAULT_PORT_SUFFIX)) name = name.slice(0, -DEFAULT_PORT_SUFFIX.length);
    if (name.endsWith('.')) name = name.slice(0, -1);
    if (name === before) return name;
  }
}

/** Why the relay would refuse `raw` as a channel, or null when it accepts it. */
export function channelProblem(raw: string): string | null {
  const name = normaliseChannel(raw);
  if (name.length === 0) return 'it is empty';
  if (name.length > MAX_LENGTH) return `it is longer than ${MAX_LENGTH} characters`;
  if (name.startsWith('[')) return IPV6_PATTERN.test(name) ? null : 'an IPv6 address must be a bracketed literal like [2001:db8::1]:25566';
  return HOST_PATTERN.test(name) ? null : 'it may contain only ASCII letters, digits, ".", "-", "_" and ":" (or be a bracketed IPv6 literal)';
}
