// Showing text that came from elsewhere (clients, operators, the environment) to a person: control
// characters are shown as escapes instead of reaching a terminal (URLs lose their secrets in
// secret-shapes.ts).

// unsafe-text.js, not text.js: the schema library is not loaded to print a table.
import { UNSAFE_TEXT_CHARS } from '../../schemas/unsafe-text.js';

// The characters that could move, erase, recolour or reorder a terminal's display (schemas/text.ts).
const UNSAFE = new RegExp(`[${UNSAFE_TEXT_CHARS}]`, 'gu');

function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text that is safe to write to a terminal: every character that could move the cursor, erase,
 * recolour, retitle or reorder the display is written as a visible escape (\x1b, \u202e).
 */
export function escapeControlChars(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/**
 * JSON text whose strings hold none of those characters raw: JSON.stringify escapes C0 and lone
 * surrogates but not DEL, C1, the separators or bidi controls. \uXXXX is the same JSON value, so
 * parsers see no change. A raw C0 character in its output can only be the indent's line breaks.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(UNSAFE, (c) => (c === '\n' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
