// How a stream hears its connection: the response closing (the client left, or the socket failed)
// and the socket draining (the client read what waited). The listeners are shared by every stream
// and find it through a tag on the response and the socket, rather than two closures per stream: a
// gateway holds tens of thousands of streams and every byte per stream counts.

import type { ServerResponse } from 'node:http';
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

function onResponseClose(this: Tagged<ServerResponse>): void {
  this[STREAM]?.clientGone();
}

function onSocketDrain(this: Tagged<Socket>): void {
  this[STREAM]?.drained();
}

/** From now on `stream` hears the response's close and the socket's drain. */
export function hearConnection(stream: ConnectionListener, res: ServerResponse, socket: Socket): void {
  (res as Tagged<ServerResponse>)[STREAM] = stream;
  res.on('close', onResponseClose);
  (socket as Tagged<Socket>)[STREAM] = stream;
  socket.on('drain', onSocketDrain);
}
