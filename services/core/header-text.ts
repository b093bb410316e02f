// What a request header says as text. Node gives a header value as latin1, one character per byte.
// A value that is valid UTF-8 is read as UTF-8, the only encoding client libraries send non-ASCII in
// today: "Café" arrives as "Café", not "CafÃ©", and a bidi override sent as UTF-8 is seen as the
// override it is. Other bytes stay one character each (U+0080-U+00FF), among them the C1 controls
// (0x80-0x9F) that the text rule (schemas/text.ts) refuses.

const NON_ASCII = /[^\x00-\x7f]/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function headerText(value: string): string {
  if (!NON_ASCII.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  try {
    return UTF8.decode(bytes);
  } catch {
    return value;
  }
}
