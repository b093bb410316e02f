// Validation and normalisation of POST entries. A payload is validated by the schema of its own
// `type` (no union, so stripping never happens inside a failed branch), then normalised: UUIDs to
// dashed lower case, `dimension` to lower case. Chat components are bounded in depth and size.

import type { ErrorObject, ValidateFunction } from 'ajv';
import { normaliseUuid } from './uuid.js';
import { ajv } from './ajv.js';
import { CHAT_MAX_BYTES, CHAT_MAX_DEPTH } from './common.js';
import { EnvelopeShell } from './envelope.js';
import { isPayloadType, PAYLOAD_TYPES, type PayloadType } from './payload-types.js';
import { PAYLOAD_SCHEMAS, type Payload } from './payloads.js';

export interface ValidationIssue {
  path: string;
  reason: string;
}

export type PayloadCheck =
  | { ok: true; type: PayloadType; payload: Payload }
  | { ok: false; unknownType: boolean; issues: ValidationIssue[] };

const MAX_ISSUES = 20;

const payloadValidators = new Map<PayloadType, ValidateFunction>(
  PAYLOAD_TYPES.map((t) => [t, ajv.compile(PAYLOAD_SCHEMAS[t])]),
);
const envelopeValidator = ajv.compile(EnvelopeShell);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toIssues(errors: ErrorObject[] | null | undefined, prefix = ''): ValidationIssue[] {
  return (errors ?? []).slice(0, MAX_ISSUES).map((e) => ({
    path: prefix + e.instancePath,
    reason: describe(e),
  }));
}

function describe(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') return `unexpected property "${String(e.params['additionalProperty'])}"`;
  if (e.keyword === 'required') return `missing required property "${String(e.params['missingProperty'])}"`;
  if (e.keyword === 'const') return `must be ${JSON.stringify(e.params['allowedValue'])}`;
  const expected: unknown = (e.parentSchema as Record<string, unknown> | undefined)?.['x-expected'];
  if (e.keyword === 'pattern' && typeof expected === 'string') return `must be ${expected}`;
  return e.message ?? 'is invalid';
}

/**
 * Validates (and normalises, in place) one payload. `value` must be an object carrying `type`;
 * the caller has already told payloads from envelopes apart.
 */
export function checkPayload(value: unknown, prefix = ''): PayloadCheck {
  if (!isObject(value)) {
    return { ok: false, unknownType: false, issues: [{ path: prefix, reason: 'a payload must be a JSON object' }] };
  }
  const type = value['type'];
  if (!isPayloadType(type)) {
    const shown = typeof type === 'string' ? `"${type.slice(0, 64)}"` : JSON.stringify(type ?? null);
    return {
      ok: false,
      unknownType: true,
      issues: [{ path: `${prefix}/type`, reason: `unknown payload type ${shown}; expected one of ${PAYLOAD_TYPES.join(', ')}` }],
    };
  }
  const validator = payloadValidators.get(type)!;
  if (!validator(value)) return { ok: false, unknownType: false, issues: toIssues(validator.errors, prefix) };
  const payload = value as Payload;
  const chatIssue = checkChat(payload, prefix);
  if (chatIssue !== null) return { ok: false, unknownType: false, issues: [chatIssue] };
  normalisePayload(payload);
  return { ok: true, type, payload };
}

export interface EnvelopeShellValue {
  user: string;
  agent?: string;
  userAgent?: string;
  host?: string;
  channel?: string;
  message: Record<string, unknown>;
}

export type EnvelopeCheck = { ok: true; envelope: EnvelopeShellValue } | { ok: false; issues: ValidationIssue[] };

/** Validates an envelope's own members (its `message` is checked separately with checkPayload). */
export function checkEnvelope(value: unknown, prefix = ''): EnvelopeCheck {
  if (!envelopeValidator(value)) return { ok: false, issues: toIssues(envelopeValidator.errors, prefix) };
  const envelope = value as EnvelopeShellValue;
  if (envelope.agent === undefined && envelope.userAgent === undefined) {
    return { ok: false, issues: [{ path: prefix, reason: 'missing required property "agent"' }] };
  }
  envelope.user = normaliseUuid(envelope.user)!;
  return { ok: true, envelope };
}

function normalisePayload(p: Payload): void {
  switch (p.type) {
    case 'death':
      p.player.uuid = normaliseUuid(p.player.uuid)!;
      if (p.position) p.position.dimension = p.position.dimension.toLowerCase();
      break;
    case 'login':
      p.player.uuid = normaliseUuid(p.player.uuid)!;
      break;
    case 'logout':
      p.player.uuid = normaliseUuid(p.player.uuid)!;
      if (p.position) p.position.dimension = p.position.dimension.toLowerCase();
      break;
    case 'entity_owner':
      p.owner.uuid = normaliseUuid(p.owner.uuid)!;
      break;
    case 'ping':
      p.player = normaliseUuid(p.player)!;
      p.position.dimension = p.position.dimension.toLowerCase();
      break;
    case 'message':
      p.to = normaliseUuid(p.to)!;
      break;
    default:
      break;
  }
}

function checkChat(p: Payload, prefix: string): ValidationIssue | null {
  if (p.type !== 'chat' && p.type !== 'message') return null;
  const component: unknown = p.message;
  if (typeof component === 'string') return null;
  if (depth(component, 0) > CHAT_MAX_DEPTH) {
    return { path: `${prefix}/message`, reason: `chat component is nested deeper than ${CHAT_MAX_DEPTH} levels` };
  }
  if (Buffer.byteLength(JSON.stringify(component)) > CHAT_MAX_BYTES) {
    return { path: `${prefix}/message`, reason: `chat component is larger than ${CHAT_MAX_BYTES} bytes` };
  }
  return null;
}

function depth(v: unknown, d: number): number {
  if (d > CHAT_MAX_DEPTH) return d;
  if (Array.isArray(v)) return v.reduce<number>((m, x) => Math.max(m, depth(x, d + 1)), d + 1);
  if (isObject(v)) return Object.values(v).reduce<number>((m, x) => Math.max(m, depth(x, d + 1)), d + 1);
  return d;
}
