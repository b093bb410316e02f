// A channel group's core subscription to its live subject. Its callback goes through guarded()
// (core/guarded-callback.ts): a message whose delivery throws costs that message only, and both that
// and a subscription error are warned at most once per 10 s per group, not once per message.

import type { Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { guarded } from '../../core/guarded-callback.js';
import type { ThrottledWarnings } from '../../core/logger.js';

export function subscribeLive(nc: NatsConnection, subject: string, key: string, warnings: ThrottledWarnings, onLive: (msg: Msg) => void): Subscription {
  return nc.subscribe(subject, {
    callback: guarded(
      (err, msg) => {
        if (err !== null) {
          warnings.warn(`sub-${key}`, { err, channel: key }, 'live subscription error');
          return;
        }
        onLive(msg);
      },
      (err, subject) => warnings.warn(`threw-${key}`, { err, channel: key, subject }, 'delivering a live message failed; the channel goes on'),
    ),
  });
}
