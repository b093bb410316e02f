// The admin service's Prometheus metrics, on its own /metrics: what strangers cost it (connections
// closed before a request was read) and the process's own. Its own registry: in the development
// mode it shares a process with the relay, whose names it must not meet.

import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import type { ConnectionRefusal } from '../core/connection-gate.js';

const REFUSALS: readonly ConnectionRefusal[] = ['per_address', 'total', 'first_byte_timeout'];

export class AdminMetrics {
  readonly registry = new Registry();
  readonly connectionsRefused: Counter<'reason'>;

  constructor(nodeId: string) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ node: nodeId });
    collectDefaultMetrics({ register: this.registry });
    this.connectionsRefused = new Counter({
      name: 'relay_admin_connections_refused_total',
      help: 'Connections the admin service reset before reading a request, by reason: per_address (the address held ADMIN_MAX_CONNECTIONS_PER_ADDRESS), total (the service held all it takes), first_byte_timeout (nothing sent in time)',
      labelNames: ['reason'],
      registers,
    });
    // Every reason from zero, so a rate or an alert over it has a series before the first refusal.
    for (const reason of REFUSALS) this.connectionsRefused.inc({ reason }, 0);
  }
}
