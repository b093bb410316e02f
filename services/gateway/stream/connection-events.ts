// How a stream hears its connection: the socket closing (the client left, or the socket failed) and
// draining (the client read what waited). The socket, not the response: once its head is written a
// stream's socket leaves the HTTP server (bare-socket.ts), and the response hears nothing more. The
// listeners are shared by every stream and find it through a tag on the socket, rather than two
// closures per stream: a gateway holds tens of thousands of streams and every byte per stream counts.

import type { Socket } from 'node:net';

/** What a stream does when its connection speaks. */
export interface ConnectionListener {
  /** The connection closed under it. */
  clientGone(): void;
  /** The socket took what was waiting. */
  drained(): void;
}

const STREAM = Symbol('stream');
type Tagged<T> = T & { [STREAM]?: ConnectionListener };

function onSocketClose(this: Tagged<Socket>): void {
  this[STREAM]?.clientGone();
}

function onSocketDrain(this: Tagged<Socket>): void {
  this[STREAM]?.drained();
}

/** From now on `stream` hears the socket's close and drain. */
export function hearConnection(stream: ConnectionListener, socket: Socket): void {
  (socket as Tagged<Socket>)[STREAM] = stream;
  socket.on('close', onSocketClose);
  socket.on('drain', onSocketDrain);
}
