// Text that people write for other people to read (a key's label, a ban's reason): shown in the
// console, the CLI's tables and the audit trail, so it may not carry the characters that move a
// terminal's cursor, break a line or reorder what follows ("Trojan Source" bidi overrides).

import { Type, type TString } from '@sinclair/typebox';

/**
 * C0 (tab, CR, ESC...), DEL, C1 (0x9b is a one-byte CSI), the line and paragraph separators, and the
 * bidi embeddings, overrides and isolates. The one list: display.ts escapes these when showing text
 * that was stored before this rule, and the schemas refuse them in what is stored now.
 */
export const UNSAFE_TEXT_CHARS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';

const UNSAFE_TEXT = new RegExp(`[${UNSAFE_TEXT_CHARS}]`, 'u');

/** A string of people's text, refused (400) when it holds any of UNSAFE_TEXT_CHARS. */
export function PlainText(options: { minLength?: number; maxLength: number; description?: string }): TString {
  const rule = 'Text without control, line-separator or bidi-override characters.';
  return Type.String({ ...options, pattern: `^[^${UNSAFE_TEXT_CHARS}]*$`, description: options.description === undefined ? rule : `${options.description} ${rule}` });
}

/** Why a piece of people's text cannot be stored, or null when it can. */
export function plainTextProblem(what: string, text: string): string | null {
  return UNSAFE_TEXT.test(text) ? `${what} may not hold control, line-separator or bidi-override characters.` : null;
}
