// A load generator's SSE stream, held on a raw socket (no SSE library): it waits for the text that
// says the stream is open, then only counts frames and reads the send time embedded in each, and
// remembers the newest id per stream index so a reopen can resume from it.

import { connect, type Socket } from 'node:net';
import { Histogram } from './histogram.js';
import type { Endpoint } from './http-conn.js';

const TS = Buffer.from('t=');
const ID = Buffer.from('\nid: ');
/** The last SSE id each stream index saw, kept when its stream is dropped (a reconnect resumes from it). */
export const lastIds = new Map<number, number>();
/** Wall-clock milliseconds, below the millisecond. */
export const now = (): number => performance.timeOrigin + performance.now();

export class StreamConn {
  readonly socket: Socket;
  ready = false;
  closed = false;
  frames = 0;
  /** Why an open that never became ready failed: `<status> <error code>`, or how the connection ended. */
  refusal: string | null = null;
  private tail: Buffer | null = null;
  private head = '';
  readonly opened: Promise<boolean>;
  readonly ended: Promise<void>;

  constructor(endpoint: Endpoint, request: string, marker: string, localAddress: string, private readonly sink: Sink, private readonly index = -1) {
    this.socket = connect({ host: endpoint.host, port: endpoint.port, localAddress });
    let resolveOpen!: (ok: boolean) => void;
    this.opened = new Promise((r) => (resolveOpen = r));
    this.ended = new Promise((r) => this.socket.once('close', () => r()));
    this.socket.once('connect', () => this.socket.write(request));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      if (!this.ready) this.refusal ??= this.head === '' ? 'closed before an answer' : 'closed before ready';
      resolveOpen(false);
    });
    this.socket.on('data', (chunk: Buffer) => {
      if (!this.ready) {
        this.head += chunk.toString('latin1');
        if (this.head.includes(marker)) {
          this.lastId(chunk);
          this.ready = true;
          this.head = '';
          resolveOpen(true);
        } else if (/^HTTP\/1\.1 [^2]/.test(this.head)) {
          // The error body's code, once it is in (the relay writes head and body in one go).
          const code = /"error":"([a-z_]+)"/.exec(this.head)?.[1];
          if (code !== undefined || this.head.length > 4096) {
            this.refusal = `${this.head.slice(9, 12)} ${code ?? '(no error code)'}`;
            this.socket.destroy();
          }
        }
        return;
      }
      this.scan(chunk);
    });
  }

  /** Remembers the newest id this stream index saw, for its next open's Last-Event-ID. */
  private lastId(chunk: Buffer): void {
    if (this.index < 0) return;
    const id = newestId(chunk);
    if (id !== null) lastIds.set(this.index, id);
  }

  /** Counts delivered frames and records their latency; a timestamp split across chunks is kept. */
  private scan(chunk: Buffer): void {
    this.lastId(chunk);
    let buf = chunk;
    if (this.tail !== null) {
      buf = Buffer.concat([this.tail, chunk]);
      this.tail = null;
    }
    const t = now();
    let at = buf.indexOf(TS);
    while (at !== -1) {
      let end = at + 2;
      while (end < buf.length && ((buf[end]! >= 48 && buf[end]! <= 57) || buf[end] === 46)) end++;
      if (end === buf.length) {
        this.tail = buf.subarray(at);
        return;
      }
      const sent = Number(buf.toString('latin1', at + 2, end));
      this.frames++;
      this.sink.record(t - sent);
      at = buf.indexOf(TS, end);
    }
    if (buf.length >= 1 && buf[buf.length - 1] === 116) this.tail = buf.subarray(buf.length - 1); // a trailing "t"
  }
}

/** The newest `id:` line of a chunk (a line split across chunks is missed: the next frame's id follows). */
function newestId(chunk: Buffer): number | null {
  const at = chunk.lastIndexOf(ID);
  if (at === -1) return null;
  const end = chunk.indexOf(10, at + ID.length);
  if (end === -1) return null;
  const id = Number(chunk.toString('latin1', at + ID.length, end));
  return Number.isSafeInteger(id) ? id : null;
}

/** Where a generator's streams count what they deliver and record its latency. */
export class Sink {
  hist = new Histogram();
  delivered = 0;
  record(ms: number): void {
    this.delivered++;
    this.hist.record(ms);
  }
  reset(): void {
    this.hist = new Histogram();
    this.delivered = 0;
  }
}
