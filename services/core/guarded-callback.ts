// nats.js 3.4 calls a core subscription's callback from inside its reading of the socket: a callback
// that throws ends that reading ("reader closed"), and the connection hears nothing more while it
// still reports itself connected (a flush never returns). So every subscription in services/ takes
// its callback through guarded() (eslint enforces it), and one bad message costs that message only.

import type { Msg, MsgCallback } from '@nats-io/nats-core';
import { ThrottledWarnings, type Logger } from './logger.js';

/** Told what a callback threw; it must not throw itself (what it throws is dropped). */
export type ThrownReport = (err: unknown, subject: string) => void;

export function guarded(callback: (err: Error | null, msg: Msg) => void, report: ThrownReport): MsgCallback<Msg> {
  return (err, msg) => {
    try {
      callback(err, msg);
    } catch (thrown) {
      try {
        report(thrown, msg.subject);
      } catch {
        // A failing report must not end the reading either.
      }
    }
  };
}

/** A report that logs what `what` threw at most once per 10 s (a message that throws each time would flood). */
export function loggedThrows(logger: Pick<Logger, 'warn'>, what: string): ThrownReport {
  const warnings = new ThrottledWarnings(logger);
  return (err, subject) => warnings.warn(what, { err, subject }, `${what} failed on a message; the subscription goes on`);
}
