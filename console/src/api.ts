// The console's only way to the admin service: JSON over fetch with the bearer token, a refusal as
// an ApiError carrying the service's code and sentence, and the live tail read as SSE from a
// streaming fetch (EventSource cannot send an Authorization header).

import type { AdminErrorCode } from '../../schemas/admin-api.js';

export class ApiError extends Error {
  readonly code: AdminErrorCode | 'network';
  readonly status: number;
  constructor(code: AdminErrorCode | 'network', status: number, message: string) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

let token = '';
let onSignedOut: () => void = () => undefined;

export function authorize(value: string, signedOut: () => void): void {
  token = value;
  onSignedOut = signedOut;
}

async function refusal(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error: AdminErrorCode; message: string };
    return new ApiError(body.error, res.status, body.message);
  } catch {
    return new ApiError('internal_error', res.status, `The admin service answered ${res.status}.`);
  }
}

export async function api<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      ...(init.signal !== undefined ? { signal: init.signal } : {}),
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError('network', 0, 'The admin service cannot be reached.');
  }
  if (!res.ok) {
    const e = await refusal(res);
    if (e.status === 401) onSignedOut();
    throw e;
  }
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/**
 * Reads a tail until `signal` aborts; each `event: entry` goes to onEntry. onOpen is called once the
 * answer's head arrives: the admin service writes it only when its consumer is listening, so from
 * then on nothing posted is missed.
 */
export async function tail<T>(path: string, signal: AbortSignal, onEntry: (entry: T) => void, onOpen: () => void): Promise<void> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal });
  if (!res.ok || res.body === null) throw await refusal(res);
  onOpen();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split('\n').find((l) => l.startsWith('data: '));
      if (data !== undefined && event.includes('event: entry')) onEntry(JSON.parse(data.slice(6)) as T);
    }
  }
}

export const enc = encodeURIComponent;
