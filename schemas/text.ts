// One text rule (DESIGN.md section 7) for every string a client or an operator controls that the
// relay shows to someone else: agents (User-Agent, an envelope's agent), key labels, ban reasons.
// They reach other players' meta frames, the console, the CLI's tables, the audit trail and the
// logs, so they may not carry what moves a terminal's cursor, breaks a line or reorders what
// follows ("Trojan Source"). Payload content is the game's and is relayed as sent; whatever prints
// it to a terminal escapes these same characters (services/core/display.ts).

import { Type, type TString } from '@sinclair/typebox';

/**
 * The characters refused, as the inside of a regular expression class (read with the `u` flag),
 * group by group:
 * - C0 (U+0000-U+001F: ESC starts every terminal sequence, CR and BS rewrite a line, LF and tab
 *   break lines and tables) and DEL (U+007F);
 * - C1 (U+0080-U+009F): U+009B is a one-byte CSI and U+0085 (NEL) a line break to some terminals;
 *   no text needs them, and a UTF-8 header read byte by byte shows them (as U+0080-U+009F);
 * - U+2028 and U+2029, the line and paragraph separators: a new line to JavaScript and to logs;
 * - the bidi embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069: they reorder
 *   everything after them on screen (CVE-2021-42574);
 * - lone surrogates (U+D800-U+DFFF not in a pair, only possible through a JSON `\u` escape): no
 *   character at all; UTF-8 cannot carry one, so it would arrive as U+FFFD instead of what was sent.
 *
 * Allowed on purpose: the bidi marks U+200E, U+200F and U+061C (they give neutral characters a
 * direction and reorder no strong text; right-to-left names need them), zero-width characters
 * (U+200B-U+200D, U+2060, U+FEFF) and tag characters (emoji sequences and several scripts are
 * written with them; they move nothing), noncharacters and private use (valid in interchange,
 * Unicode Corrigendum #9; a terminal shows a box). Spoofing a look-alike agent gains nothing: who
 * sent a frame is its uuid, never its agent.
 */
export const UNSAFE_TEXT_CHARS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069\\ud800-\\udfff';

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
