// Validation and normalisation of POST entries. A payload is validated by the schema of its own
// `type` (no union, so stripping never happens inside a failed branch), then normalised: UUIDs to
// dashed lower case, `dimension` to lower case. Before any schema runs, one walk over the whole
// entry refuses non-finite numbers and nesting past ENTRY_MAX_DEPTH (CHAT_MAX_DEPTH in chat
// components), free-form members (gamedata, nbt, chat components) included, so nothing downstream
// (ajv, stripping, JSON.stringify) ever sees such a value. Chat components are bounded in size too.

import type { ErrorObject, ValidateFunction } from 'ajv';
import { normaliseUuid } from './uuid.js';
import { ajv } from './ajv.js';
import { CHAT_MAX_BYTES, CHAT_MAX_DEPTH, ENTRY_MAX_DEPTH } from './common.js';
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

/** A JSON object (not null, not an array): what every payload and envelope must be. */
export function isObject(v: unknown): v is Record<string, unknown> {
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
  const expected: unknown = e.parentSchema?.['x-expected'];
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
  const bounds = boundsIssue(value, prefix, 1);
  if (bounds !== null) return { ok: false, unknownType: false, issues: [bounds] };
  const type = value['type'];
  if (!isPayloadType(type)) {
    const shown = typeof type === 'string' ? `"${type.slice(0, 64)}"` : JSON.stringify(type ?? null).slice(0, 64);
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
  // The envelope itself is level 0, so its `message` is bounded exactly as if sent bare.
  const bounds = boundsIssue(value, prefix, 0);
  if (bounds !== null) return { ok: false, issues: [bounds] };
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

/** The byte bound of chat components; their depth is bounded by the walk (boundsIssue). */
function checkChat(p: Payload, prefix: string): ValidationIssue | null {
  if (p.type !== 'chat' && p.type !== 'message') return null;
  const component: unknown = p.message;
  if (typeof component === 'string') return null;
  if (Buffer.byteLength(JSON.stringify(component)) > CHAT_MAX_BYTES) {
    return { path: `${prefix}/message`, reason: `chat component is larger than ${CHAT_MAX_BYTES} bytes` };
  }
  return null;
}

interface WalkFrame {
  value: unknown;
  /** Nesting level of `value` when it is an object or array; a payload itself is level 1. */
  level: number;
  parent: WalkFrame | null;
  key: string;
  /** The chat component this value lies in, if any: those have their own, tighter bound. */
  chat: WalkFrame | null;
}

/** Whether `key` of the payload `parent` holds a chat component (the `message` of chat and message). */
function isChatMember(parent: WalkFrame, key: string | number): boolean {
  if (parent.level !== 1 || key !== 'message') return false;
  const type = (parent.value as Record<string, unknown>)['type'];
  return type === 'chat' || type === 'message';
}

/**
 * A non-finite number (JSON.parse gives Infinity for 1e400, which JSON.stringify delivers as null) or
 * a container nested deeper than ENTRY_MAX_DEPTH, or than CHAT_MAX_DEPTH inside a chat component
 * (JSON.stringify overflows its stack on deep values; receivers' parsers may too). Iterative, and it
 * never descends past a bound, so no input can overflow this walk either. Scalars are checked in
 * place and only containers get a frame, so a long array of numbers costs little.
 */
function boundsIssue(root: unknown, prefix: string, rootLevel: number): ValidationIssue | null {
  if (typeof root === 'number' && !Number.isFinite(root)) return { path: prefix, reason: NOT_FINITE };
  if (typeof root !== 'object' || root === null) return null;
  const stack: WalkFrame[] = [{ value: root, level: rootLevel, parent: null, key: '', chat: null }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    // A chat component is level 1 of its own count, one below its payload.
    if (frame.chat !== null && frame.level - frame.chat.level + 1 > CHAT_MAX_DEPTH) {
      return { path: prefix + pointer(frame.chat), reason: `chat component is nested deeper than ${CHAT_MAX_DEPTH} levels` };
    }
    if (frame.level > ENTRY_MAX_DEPTH) {
      return { path: prefix + pointer(frame), reason: `nested deeper than ${ENTRY_MAX_DEPTH} levels, counting the payload itself as level 1` };
    }
    const v = frame.value;
    // Children in reverse, so containers come off the stack in document order.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        if (!visit(stack, frame, v[i], i)) return notFinite(prefix, frame, i);
      }
    } else {
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = keys.length - 1; i >= 0; i--) {
        if (!visit(stack, frame, record[keys[i]!], keys[i]!)) return notFinite(prefix, frame, keys[i]!);
      }
    }
  }
  return null;
}

const NOT_FINITE = 'must be a finite number';

/** Checks a scalar child in place (false: a non-finite number); stacks a container child. */
function visit(stack: WalkFrame[], parent: WalkFrame, child: unknown, key: string | number): boolean {
  if (typeof child === 'number') return Number.isFinite(child);
  if (typeof child !== 'object' || child === null) return true;
  const next: WalkFrame = { value: child, level: parent.level + 1, parent, key: String(key), chat: parent.chat };
  if (next.chat === null && isChatMember(parent, key)) next.chat = next;
  stack.push(next);
  return true;
}

function notFinite(prefix: string, parent: WalkFrame, key: string | number): ValidationIssue {
  return { path: `${prefix}${pointer(parent)}/${escapeKey(String(key))}`, reason: NOT_FINITE };
}

function escapeKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The JSON Pointer of a frame (escaped as ajv's instancePath is). */
function pointer(frame: WalkFrame): string {
  const keys: string[] = [];
  for (let f: WalkFrame | null = frame; f !== null && f.parent !== null; f = f.parent) {
    keys.push(escapeKey(f.key));
  }
  return keys.reverse().map((k) => `/${k}`).join('');
}
