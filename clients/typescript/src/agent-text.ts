// The relay's one text rule for agents (schemas/text.ts, written into generated/schemas.ts). An agent
// it refuses fails every request (a userAgent: 400 invalid_user_agent) or a whole batch (an envelope
// agent: 400 invalid_payload), so the library refuses it before anything is sent.

import { UNSAFE_TEXT_CHARS } from './generated/schemas.js';

const UNSAFE = new RegExp(`[${UNSAFE_TEXT_CHARS}]`, 'u');

/** Why the relay would refuse `agent`, naming the first such character, or null when it takes it. */
export function agentProblem(agent: string): string | null {
  const at = UNSAFE.exec(agent);
  if (at === null) return null;
  const code = at[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `holds U+${code} at character ${Array.from(agent.slice(0, at.index)).length + 1}: the relay refuses control, line-separator and bidi-control characters and lone surrogates in an agent`;
}
