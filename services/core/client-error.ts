// Requests Node's HTTP parser cannot read never reach a route: a header holding a control character,
// a malformed request line, headers past Node's 16 KiB, headers not finished in time. Each service
// answers them in its own shape like every other refusal (a status, {"error", "message"}), and the
// connection is closed, since what follows on it cannot be read either.

import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { RelayError } from './errors.js';

interface ParserError extends Error {
  code?: string;
}

/** What the parser could not read, in the three kinds a client is told of. */
export type Unreadable = 'timeout' | 'headers_too_large' | 'malformed';

export function unreadableKind(err: ParserError): Unreadable {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'timeout';
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  return 'malformed';
}

/** The sentence for each kind, the same on every port. */
export function unreadableSentence(kind: Unreadable, err: ParserError): string {
  switch (kind) {
    case 'timeout':
      return 'The request headers did not arrive in time; the connection is closed.';
    case 'headers_too_large':
      return 'The request headers are larger than 16 KiB; nothing was done.';
    case 'malformed':
      return `The request is not valid HTTP/1.1 (${err.code ?? 'unreadable'}): a header may hold a control character, or the request line is malformed; nothing was done.`;
  }
}

/** The client port's refusal for what the parser could not read. */
export function clientErrorAnswer(err: ParserError): RelayError {
  const kind = unreadableKind(err);
  const code = kind === 'timeout' ? 'request_timeout' : kind === 'headers_too_large' ? 'headers_too_large' : 'bad_request';
  return new RelayError(code, unreadableSentence(kind, err));
}

/** A handler for the server's 'clientError' event, answering with `answer`'s status and JSON body. */
export function clientErrorHandler(answer: (err: ParserError) => { status: number; body: unknown }): (err: ParserError, socket: Socket) => void {
  return (err, socket) => {
    // A connection reset by the client: nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, body } = answer(err);
    const text = JSON.stringify(body);
    if (socket.writable) {
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
    }
    socket.destroy();
  };
}
