// Requests Node's HTTP parser cannot read never reach a route: a header holding a control character,
// a malformed request line, headers past Node's 16 KiB, headers not finished in time. They are
// answered here, in the relay's shape like every other refusal (a status, {"error", "message"}),
// and the connection is closed, since what follows on it cannot be read either.

import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { RelayError, type ErrorCode } from './errors.js';

interface ParserError extends Error {
  code?: string;
}

/** The refusal for what the parser could not read. */
export function clientErrorAnswer(err: ParserError): RelayError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RelayError('request_timeout', 'The request headers did not arrive in time; the connection is closed.');
  if (err.code === 'HPE_HEADER_OVERFLOW') return new RelayError('headers_too_large', 'The request headers are larger than 16 KiB; nothing was done.');
  return new RelayError('bad_request', `The request is not valid HTTP/1.1 (${err.code ?? 'unreadable'}): a header may hold a control character, or the request line is malformed; nothing was done.`);
}

/** A handler for the server's 'clientError' event; `refused` counts each answer by its code. */
export function clientErrorHandler(refused: (code: ErrorCode) => void): (err: ParserError, socket: Socket) => void {
  return (err, socket) => {
    // A connection reset by the client: nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const answer = clientErrorAnswer(err);
    refused(answer.code);
    const body = JSON.stringify(answer.toBody());
    if (socket.writable) {
      socket.write(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
  };
}
