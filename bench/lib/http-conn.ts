// A keep-alive HTTP/1.1 client connection on a raw socket: one request in flight, responses read by
// Content-Length (or chunked). Reconnects by itself when the server closes (Pushpin's publish
// endpoint answers "Connection: close"). Small and predictable, so the load generator is never the
// bottleneck.

import { connect, type Socket } from 'node:net';

export interface Endpoint {
  host: string;
  port: number;
}

export class HttpConn {
  busy = false;
  closed = false;
  private socket: Socket | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private onResponse: ((status: number) => void) | null = null;
  private readonly endpoint: Endpoint;
  private readonly localAddress: string | undefined;
  readonly ready: Promise<void>;

  constructor(endpoint: Endpoint, localAddress?: string) {
    this.endpoint = endpoint;
    this.localAddress = localAddress;
    this.ready = this.open();
  }

  private open(): Promise<void> {
    const socket = connect({ host: this.endpoint.host, port: this.endpoint.port, ...(this.localAddress ? { localAddress: this.localAddress } : {}) });
    socket.setNoDelay(true);
    this.socket = socket;
    this.buf = Buffer.alloc(0);
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
      const cb = this.onResponse;
      this.onResponse = null;
      cb?.(0);
    });
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
  }

  send(request: string | Buffer): Promise<number> {
    this.busy = true;
    return new Promise((resolve) => {
      this.onResponse = (status) => {
        this.busy = false;
        resolve(status);
      };
      if (this.socket === null || this.socket.destroyed) {
        this.open().then(
          () => this.socket?.write(request),
          () => {
            const cb = this.onResponse;
            this.onResponse = null;
            cb?.(0);
          },
        );
      } else {
        this.socket.write(request);
      }
    });
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      const headEnd = this.buf.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const head = this.buf.subarray(0, headEnd).toString('latin1');
      const status = Number(head.slice(9, 12));
      const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let total: number;
      if (cl !== null) {
        total = headEnd + 4 + Number(cl[1]);
        if (this.buf.length < total) return;
      } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const end = this.buf.indexOf('\r\n0\r\n\r\n', headEnd);
        if (end === -1) return;
        total = end + 7;
      } else {
        total = headEnd + 4;
      }
      this.buf = this.buf.subarray(total);
      const cb = this.onResponse;
      this.onResponse = null;
      cb?.(status);
    }
  }

  close(): void {
    this.closed = true;
    this.socket?.destroy();
  }
}

/** Raw request text for a POST with a JSON body. */
export function postRequest(path: string, host: string, headers: Record<string, string>, body: string): string {
  const lines = [`POST ${path} HTTP/1.1`, `host: ${host}`, 'content-type: application/json', `content-length: ${Buffer.byteLength(body)}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return lines.join('\r\n') + '\r\n\r\n' + body;
}
