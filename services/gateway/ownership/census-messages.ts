// The owner census's two messages as they travel between gateways (owner-census.ts): questions,
// published on relay.owner-census.ask, and answers, on the asker's subject. Each message of
// questions gets one message of answers in the same form (or several, by size):
//  - one question: `{id, from, owner, channel}`, answered `{id, node, count, holdsKey, batches:
//    true}`, what every version of the census reads (the earlier one ignores `batches`);
//  - several: `{from, questions: [{id, owner, channel}, ...]}`, answered `{node, answers: [{id,
//    count, holdsKey}, ...]}`, at most MAX_QUESTIONS_PER_MESSAGE and NATS's max_payload. The census
//    sends these only to a mesh whose every gateway has said it reads them (`batches`), so gateways
//    of two versions count each other in a rolling upgrade.
// Whatever arrives is read as untrusted: a message that does not parse, or has a field of the wrong
// kind anywhere, is dropped whole.

import { messageRuns } from '../../core/message-runs.js';

/** A gateway's question: how many streams `owner` holds, and whether one is on `channel`. */
export interface CensusQuestion {
  /** The asking process's own prefix and a count: unique across restarts of one node id. */
  readonly id: string;
  readonly owner: string;
  readonly channel: string | null;
}

/** One gateway's answer to a question. */
export interface CensusAnswer {
  readonly id: string;
  readonly count: number;
  readonly holdsKey: boolean;
}

/** Questions (or answers) in one message, at most; fewer when NATS's max_payload is smaller. */
export const MAX_QUESTIONS_PER_MESSAGE = 256;

/** What RELAY_NODE_ID allows (config/schema.ts), with room: `from` and `node` name subject tokens. */
const NODE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A turn's questions as messages: each alone, or (to a mesh that reads them) together within `maxBytes`. */
export function questionsMessages(from: string, questions: readonly CensusQuestion[], together: boolean, maxBytes: number): string[] {
  const alone = (q: CensusQuestion): string => JSON.stringify({ ...q, from });
  if (!together) return questions.map(alone);
  return packed(questions, maxBytes, `{"from":${JSON.stringify(from)},"questions":[`, alone);
}

/** Answers to one message of questions, in its form: `single` for the one-question form. */
export function answersMessages(node: string, answers: readonly CensusAnswer[], single: boolean, maxBytes: number): string[] {
  const alone = (a: CensusAnswer): string => JSON.stringify({ ...a, node, batches: true });
  if (single) return [alone(answers[0]!)];
  return packed(answers, maxBytes, `{"node":${JSON.stringify(node)},"answers":[`, alone);
}

/** Items in as few messages `head` + items + `]}` as fit; a message of one item in its one-item form (`alone`). */
function packed<T>(items: readonly T[], maxBytes: number, head: string, alone: (item: T) => string): string[] {
  // A lone item (most turns ask one question) is written once, in its own form.
  if (items.length === 1) return [alone(items[0]!)];
  const parts = items.map((item) => JSON.stringify(item));
  const runs = messageRuns(parts, Buffer.byteLength(head) + 2, maxBytes, MAX_QUESTIONS_PER_MESSAGE);
  return runs.map(([s, e]) => (e - s === 1 ? alone(items[s]!) : `${head}${parts.slice(s, e).join(',')}]}`));
}

/** The questions of one message, and whether it was the one-question form (answered in kind). */
export function parseQuestions(text: string): { from: string; questions: CensusQuestion[]; single: boolean } | null {
  const v = parseObject(text);
  if (v === null || typeof v.from !== 'string' || !NODE_ID.test(v.from)) return null;
  if (v.questions === undefined) {
    const q = question(v);
    return q === null ? null : { from: v.from, questions: [q], single: true };
  }
  const questions = listOf(v.questions, question);
  return questions === null ? null : { from: v.from, questions, single: false };
}

/** The answers of one message, either form, and whether their node reads several questions a message. */
export function parseAnswers(text: string): { node: string; answers: CensusAnswer[]; batches: boolean } | null {
  const v = parseObject(text);
  if (v === null || typeof v.node !== 'string' || !NODE_ID.test(v.node)) return null;
  if (v.answers === undefined) {
    const a = answer(v);
    return a === null ? null : { node: v.node, answers: [a], batches: v.batches === true };
  }
  const answers = listOf(v.answers, answer);
  return answers === null ? null : { node: v.node, answers, batches: true };
}

function question(v: Record<string, unknown>): CensusQuestion | null {
  if (typeof v.id !== 'string' || typeof v.owner !== 'string') return null;
  if (v.channel !== null && typeof v.channel !== 'string') return null;
  return { id: v.id, owner: v.owner, channel: v.channel };
}

function answer(v: Record<string, unknown>): CensusAnswer | null {
  if (typeof v.id !== 'string' || typeof v.holdsKey !== 'boolean') return null;
  if (typeof v.count !== 'number' || !Number.isSafeInteger(v.count) || v.count < 0) return null;
  return { id: v.id, count: v.count, holdsKey: v.holdsKey };
}

/** Every entry read by `one`, or null when the list is not one, is empty or too long, or an entry fails. */
function listOf<T>(list: unknown, one: (v: Record<string, unknown>) => T | null): T[] | null {
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_QUESTIONS_PER_MESSAGE) return null;
  const out: T[] = [];
  for (const item of list as unknown[]) {
    const v = isObject(item) ? one(item) : null;
    if (v === null) return null;
    out.push(v);
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}
