// The characters of the one text rule (schemas/text.ts), alone in a module that imports nothing, so
// the console's bundle shows text by the same rule as the CLI without taking the schema library.

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
