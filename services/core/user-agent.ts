// The sender's User-Agent as the relay reads it. It becomes meta.agent (and userAgent) of everything
// the client sends, the agent of its stream's claim (the console) and, for a cracked client, part of
// its ban record: text other people read, so it follows the one text rule (schemas/text.ts).

import type { IncomingHttpHeaders } from 'node:http';
import { AGENT_MAX, plainTextProblem } from '../../schemas/text.js';
import { RelayError } from './errors.js';
import { headerText } from './header-text.js';

/** The User-Agent sent (header-text.ts), cut to AGENT_MAX; null when absent or empty. */
export function readUserAgent(headers: IncomingHttpHeaders): string | null {
  const raw = headers['user-agent'];
  if (raw === undefined || raw === '') return null;
  const text = headerText(raw);
  // By code point, so a cut never leaves half of a surrogate pair.
  return text.length > AGENT_MAX ? Array.from(text).slice(0, AGENT_MAX).join('') : text;
}

/** The 400 for an agent the text rule refuses, or null when it may be shown to others. */
export function userAgentRefusal(agent: string | null): RelayError | null {
  const problem = agent === null ? null : plainTextProblem('The User-Agent header', agent);
  if (problem === null) return null;
  return new RelayError('invalid_user_agent', `${problem} Other players see it as your agent: send <mod_id>/<mod_version>+<git commit>.`);
}
