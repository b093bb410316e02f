// Open-loop publishing: POSTs at a fixed rate over a few keep-alive connections, each timed from its
// scheduled send (a backlog shows as latency, not as a slower rate), the send time in its body.

import { postRequest, type HttpConn } from './http-conn.js';
import type { PublishSpec } from './loadgen-commands.js';
import { now } from './stream-conn.js';

export interface PublishResult {
  sent: number;
  acked: number;
  errors: number;
}

/** Publishes at a fixed rate for `ms`; the timestamp is the scheduled send time. */
export async function publishFor(spec: PublishSpec, ms: number, conns: HttpConn[]): Promise<PublishResult> {
  const result: PublishResult = { sent: 0, acked: 0, errors: 0 };
  const start = now();
  const end = start + ms;
  const interval = 1000 / spec.perSecond;
  const backlog: number[] = [];
  let channel = 0;
  const send = (conn: HttpConn, scheduled: number): void => {
    const ch = spec.channels[channel++ % spec.channels.length]!;
    const body = spec.body.replaceAll('{channel}', ch).replaceAll('{ts}', scheduled.toFixed(3));
    const path = spec.path.replaceAll('{channel}', ch);
    result.sent++;
    void conn.send(postRequest(path, `${spec.endpoint.host}:${spec.endpoint.port}`, spec.headers, body)).then((status) => {
      if (status >= 200 && status < 300) result.acked++;
      else result.errors++;
      const nextDue = backlog.shift();
      if (nextDue !== undefined && !conn.closed) send(conn, nextDue);
    });
  };
  let due = start;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const t = now();
      while (due <= t && due < end) {
        const idle = conns.find((c) => !c.busy && !c.closed);
        if (idle !== undefined) send(idle, due);
        else backlog.push(due);
        due += interval;
      }
      if (t >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  // Let in-flight requests finish (bounded) so their frames are counted where they belong.
  const drainDeadline = now() + 2000;
  while ((backlog.length > 0 || conns.some((c) => c.busy)) && now() < drainDeadline) await new Promise((r) => setTimeout(r, 5));
  result.errors += backlog.length;
  return result;
}
