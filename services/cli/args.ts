// Arguments that name things in the mesh or times, checked before anything reaches NATS: a bad one
// is exit 2 with one sentence, never a stack trace from deep inside a client library.
import { normaliseUuid } from '../../schemas/uuid.js';
import { normaliseChannel } from '../core/channel.js';
import { isRelayError } from '../core/errors.js';
import { parseExpiry } from '../core/units.js';
import { CliError } from './cli-error.js';

/** --expires of keys create and bans add, as an ISO time; exit 2 for anything else or a past time. */
export function expiryArg(text: string): string {
  const parsed = parseExpiry(text);
  if (!parsed.ok) throw new CliError(`--expires ${parsed.problem} (got "${text}").`, 2);
  return parsed.iso;
}

export function uuidArg(value: string): string {
  const uuid = normaliseUuid(value.trim());
  if (uuid === null) throw new CliError(`"${value}" is not a UUID (dashed or undashed).`, 2);
  return uuid;
}

/** Client ids are relay_ and hex; other text would reach the KV bucket, which throws on "*" or " ". */
export function clientIdArg(value: string): string {
  const id = value.trim();
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw new CliError(`"${value}" is not a client id (they look like relay_0123456789abcdef01234567).`, 2);
  return id;
}

/** A channel as clients name it (PLAY.example.net., play.example.net:25565), normalised the way the relay does. */
export function channelArg(value: string): string {
  try {
    return normaliseChannel(value);
  } catch (e) {
    throw new CliError(isRelayError(e) ? e.message : String(e), 2);
  }
}
