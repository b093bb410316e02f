// A form field's text, trimmed ('' when absent or a file).
export function field(form: FormData, name: string): string {
  const v = form.get(name);
  return typeof v === 'string' ? v.trim() : '';
}
