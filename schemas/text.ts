// One text rule (DESIGN.md section 7) for every string a client or an operator controls that the
// relay shows to someone else: agents (User-Agent, an envelope's agent), key labels, ban reasons.
// They reach other players' meta frames, the console, the CLI's tables, the audit trail and the
// logs, so they may not carry what moves a terminal's cursor, breaks a line or reorders what
// follows ("Trojan Source"). Payload content is the game's and is relayed as sent; whatever prints
// it to a terminal escapes these same characters (services/core/display.ts).

import { Type, type TString } from '@sinclair/typebox';

export { UNSAFE_TEXT_CHARS } from './unsafe-text.js';
import { UNSAFE_TEXT_CHARS } from './unsafe-text.js';

/** An agent's length at most, whichever way it comes: a longer envelope agent is refused, a User-Agent cut. */
export const AGENT_MAX = 256;

/** What the rule refuses, in words (error messages and schema descriptions). */
export const UNSAFE_TEXT_WORDS = 'control, line-separator or bidi-control characters or lone surrogates';

const UNSAFE_TEXT = new RegExp(`[${UNSAFE_TEXT_CHARS}]`, 'u');

/** The first refused character of `text` as U+XXXX with its position (1-based, in code points), or null. */
export function unsafeCharIn(text: string): string | null {
  const at = UNSAFE_TEXT.exec(text);
  if (at === null) return null;
  const code = at[0].codePointAt(0)!;
  const position = Array.from(text.slice(0, at.index)).length + 1;
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} at character ${position}`;
}

/** A JSON Schema pattern matching text that holds none of UNSAFE_TEXT_CHARS. */
export const PLAIN_TEXT_PATTERN = `^[^${UNSAFE_TEXT_CHARS}]*$`;

/** A JSON Schema string of such text, refused (400) when it holds any of UNSAFE_TEXT_CHARS. */
export function PlainText(options: { minLength?: number; maxLength: number; description?: string }): TString {
  const rule = `Text without ${UNSAFE_TEXT_WORDS}.`;
  return Type.String({ ...options, pattern: PLAIN_TEXT_PATTERN, description: options.description === undefined ? rule : `${options.description} ${rule}` });
}

/** Why a piece of such text cannot be taken, naming `what` and the first refused character, or null. */
export function plainTextProblem(what: string, text: string): string | null {
  const found = unsafeCharIn(text);
  return found === null ? null : `${what} may not hold ${UNSAFE_TEXT_WORDS}; found ${found}.`;
}

/** How the relay reads a User-Agent, as the OpenAPI and AsyncAPI documents describe the header. */
export const USER_AGENT_RULE = `Read as UTF-8 when its bytes are valid UTF-8, else one character per byte (Latin-1), and cut to ${AGENT_MAX} characters. One holding ${UNSAFE_TEXT_WORDS} is refused with 400 \`invalid_user_agent\`: other players see it.`;
