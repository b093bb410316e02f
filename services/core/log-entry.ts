// A stored payload as operators see it (replay, tail): sequence, store time, meta frame, payload.

import type { MsgHdrs } from '@nats-io/nats-core';
import type { LogEntry } from '../../schemas/log-entry.js';
import { Header } from './wire-headers.js';

// The shape is schemas/log-entry.ts (the admin API documents it, the console reads it).
export type { LogEntry };

/** `region`: with regions, the region whose log holds it (`seq` is its sequence there). */
export function logEntry(headers: MsgHdrs | undefined, data: Uint8Array, seq: number, time: Date, region: string | null = null): LogEntry | null {
  if (headers === undefined) return null;
  const type = headers.get(Header.Type);
  if (type === '') return null;
  let payload: LogEntry['data'];
  try {
    payload = JSON.parse(Buffer.from(data).toString('utf8')) as LogEntry['data'];
  } catch {
    return null;
  }
  return {
    ...(region === null ? {} : { region }),
    seq,
    time: time.toISOString(),
    meta: {
      uuid: headers.get(Header.Sender),
      agent: headers.has(Header.Agent) ? headers.get(Header.Agent) : null,
      channel: headers.get(Header.Channel),
    },
    data: payload,
  };
}

/**
 * One line a person can scan: what the payload says, shortened. It is the client's text as sent,
 * control characters included: whoever prints it to a terminal escapes it (escapeControlChars).
 */
export function summarise(data: LogEntry['data']): string {
  const d = data as Record<string, unknown>;
  const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
  const player = (v: unknown): string =>
    typeof v === 'string' ? v : typeof v === 'object' && v !== null ? text((v as { name?: unknown }).name ?? '') : '';
  let s: string;
  switch (data.type) {
    case 'chat':
      s = text(d['message']);
      break;
    case 'message':
      s = `to ${String(d['to'])}: ${text(d['message'])}`;
      break;
    case 'death':
    case 'login':
    case 'logout':
      s = player(d['player']);
      break;
    case 'entity_owner':
      s = `${String(d['id'])} owned by ${player(d['owner'])}`;
      break;
    case 'ping': {
      const p = d['position'] as { x?: number; y?: number; z?: number; dimension?: string } | undefined;
      s = p ? `${p.dimension ?? ''} ${p.x ?? ''} ${p.y ?? ''} ${p.z ?? ''}` : '';
      break;
    }
    case 'presence': {
      const a = d['attributes'] as { health?: number } | undefined;
      s = `health ${a?.health ?? '?'}, ${Array.isArray(d['inventory']) ? d['inventory'].length : 0} slots`;
      break;
    }
    case 'minigame':
      s = text(d['game'] ?? '');
      break;
    default:
      s = '';
  }
  // Cut by code point: cutting by UTF-16 unit can split an emoji into a lone surrogate.
  const chars = Array.from(s);
  return chars.length > 100 ? `${chars.slice(0, 97).join('')}...` : s;
}
