// NATS headers ingress stamps on every stored payload so gateways filter and build the meta frame
// without parsing the body.

import type { MsgHdrs } from '@nats-io/nats-core';

export const Header = {
  Sender: 'Relay-Sender',
  Agent: 'Relay-Agent',
  /** The sender's profile name, when a verified session gave one (the published client's meta). */
  SenderName: 'Relay-Sender-Name',
  Type: 'Relay-Type',
  Channel: 'Relay-Channel',
  To: 'Relay-To',
  /** Ingress clock at publish, epoch ms: delivery lag is measured against it. */
  Time: 'Relay-Time',
  // Set by JetStream RePublish.
  Sequence: 'Nats-Sequence',
  LastSequence: 'Nats-Last-Sequence',
  Subject: 'Nats-Subject',
} as const;

/**
 * A header's last value. A writer's own Nats-* headers stay in what it stored and JetStream appends
 * its own after them (RePublish, direct get), so only the last value of each is the server's.
 */
export function lastHeader(headers: MsgHdrs, name: string): string {
  const values = headers.values(name);
  return values[values.length - 1] ?? '';
}
