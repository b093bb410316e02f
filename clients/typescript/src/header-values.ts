// What a header can carry. fetch refuses a value with CR, LF or NUL or a character above U+00FF by
// throwing an error that quotes the value: a token or secret with such a character landed whole in
// the error message (and in logs of state changes), and the request was retried for ever. Credentials
// are therefore checked before any request, and a refusal never quotes them.

/** Why `value` cannot be a credential header value, or null when it can: visible ASCII, no spaces. */
export function headerValueProblem(value: string): string | null {
  if (value === '') return 'is empty';
  if (/[\r\n\0]/.test(value)) return 'contains a line break or NUL';
  if (!/^[\x21-\x7e]+$/.test(value)) return 'contains a space, a control character or a character outside ASCII';
  return null;
}
