// The owner census's messages between gateways: one question (and its answer) alone in the form
// every version reads, several of one turn together, and anything malformed dropped whole.
import { describe, expect, it } from 'vitest';
import { answersMessages, MAX_QUESTIONS_PER_MESSAGE, parseAnswers, parseQuestions, questionsMessages } from '../../services/gateway/ownership/census-messages.js';

const q = (n: number) => ({ id: `p.${n}`, owner: `acct-${n}`, channel: n % 2 === 0 ? `c${n}.example.net` : null });
const MiB = 1024 * 1024;

describe('census messages', () => {
  it('a lone question travels in the one-question form, and several of a turn in one message', () => {
    expect(questionsMessages('gw1', [q(1)], true, MiB).map((t): unknown => JSON.parse(t))).toEqual([{ id: 'p.1', owner: 'acct-1', channel: null, from: 'gw1' }]);
    expect(questionsMessages('gw1', [q(1)], true, MiB).map(parseQuestions)).toEqual([{ from: 'gw1', questions: [q(1)], single: true }]);
    const many = [q(1), q(2), q(3)];
    expect(questionsMessages('gw1', many, true, MiB).map(parseQuestions)).toEqual([{ from: 'gw1', questions: many, single: false }]);
  });

  it('to a mesh that has not said it reads several a message, each question travels alone', () => {
    const many = [q(1), q(2), q(3)];
    expect(questionsMessages('gw1', many, false, MiB).map(parseQuestions)).toEqual(many.map((one) => ({ from: 'gw1', questions: [one], single: true })));
  });

  it('each message of questions is answered in its own form, saying that its node reads several a message', () => {
    const one = { id: 'p.1', count: 2, holdsKey: true };
    expect(answersMessages('gw2', [one], true, MiB).map((t): unknown => JSON.parse(t))).toEqual([{ ...one, node: 'gw2', batches: true }]);
    expect(answersMessages('gw2', [one], true, MiB).map(parseAnswers)).toEqual([{ node: 'gw2', answers: [one], batches: true }]);
    const both = [one, { id: 'p.2', count: 0, holdsKey: false }];
    expect(answersMessages('gw2', both, false, MiB).map(parseAnswers)).toEqual([{ node: 'gw2', answers: both, batches: true }]);
    // An earlier version's answer: read, and its node not taken to read several a message.
    expect(parseAnswers(JSON.stringify({ ...one, node: 'old' }))).toEqual({ node: 'old', answers: [one], batches: false });
  });

  it('a turn of questions fills messages up to the server’s max_payload, every question once, in order', () => {
    const long = (n: number) => ({ id: `p.${n}`, owner: `acct-${n}`, channel: `${'x'.repeat(240)}.example.net` });
    const questions = Array.from({ length: 256 }, (_, i) => long(i));
    for (const maxBytes of [64 * 1024, 4096, 1000]) {
      const texts = questionsMessages('gw1', questions, true, maxBytes);
      expect(texts.length).toBeGreaterThan(1);
      for (const t of texts) expect(Buffer.byteLength(t)).toBeLessThanOrEqual(maxBytes);
      expect(texts.flatMap((t) => parseQuestions(t)?.questions ?? [])).toEqual(questions);
    }
    // Answers to a message of 256, against a limit that holds a few dozen.
    const answers = Array.from({ length: 256 }, (_, i) => ({ id: `p.${i}`, count: i, holdsKey: i % 2 === 0 }));
    const texts = answersMessages('gw2', answers, false, 2048);
    for (const t of texts) expect(Buffer.byteLength(t)).toBeLessThanOrEqual(2048);
    expect(texts.flatMap((t) => parseAnswers(t)?.answers ?? [])).toEqual(answers);
  });

  it('a message exactly at the limit goes whole, and one byte less splits it', () => {
    const two = [q(1), q(2)];
    const limit = Buffer.byteLength(questionsMessages('gw1', two, true, MiB)[0]!);
    expect(questionsMessages('gw1', two, true, limit).map((t) => parseQuestions(t)?.questions.length)).toEqual([2]);
    expect(questionsMessages('gw1', two, true, limit - 1).map((t) => parseQuestions(t)?.questions.length)).toEqual([1, 1]);
    const answers = [{ id: 'p.1', count: 1, holdsKey: true }, { id: 'p.2', count: 0, holdsKey: false }];
    const answerLimit = Buffer.byteLength(answersMessages('gw2', answers, false, MiB)[0]!);
    expect(answersMessages('gw2', answers, false, answerLimit)).toHaveLength(1);
    expect(answersMessages('gw2', answers, false, answerLimit - 1)).toHaveLength(2);
  });

  it('never puts more than MAX_QUESTIONS_PER_MESSAGE in one message, whatever the payload limit', () => {
    const questions = Array.from({ length: 600 }, (_, i) => q(i));
    expect(questionsMessages('gw1', questions, true, 64 * MiB).map((t) => parseQuestions(t)?.questions.length)).toEqual([256, 256, 88]);
  });

  it.each([
    ['not JSON', '{'],
    ['a list', '[]'],
    ['no asker', JSON.stringify({ questions: [q(1)] })],
    ['an asker that is no subject token', JSON.stringify({ from: 'a.b', questions: [q(1)] })],
    ['no questions', JSON.stringify({ from: 'gw1', questions: [] })],
    ['questions that are no list', JSON.stringify({ from: 'gw1', questions: { 0: q(1) } })],
    ['one entry without an owner', JSON.stringify({ from: 'gw1', questions: [q(1), { id: 'p.2', channel: null }] })],
    ['one entry with a numeric channel', JSON.stringify({ from: 'gw1', questions: [q(1), { id: 'p.2', owner: 'a', channel: 5 }] })],
    ['one entry that is no object', JSON.stringify({ from: 'gw1', questions: [q(1), 'p.2'] })],
    ['more than a message may hold', JSON.stringify({ from: 'gw1', questions: Array.from({ length: MAX_QUESTIONS_PER_MESSAGE + 1 }, (_, i) => q(i)) })],
  ])('questions with %s are dropped whole', (_what, text) => {
    expect(parseQuestions(text)).toBeNull();
  });

  it.each([
    ['no node', JSON.stringify({ answers: [{ id: 'p.1', count: 1, holdsKey: false }] })],
    ['a node that is no subject token', JSON.stringify({ node: 'gw.2', answers: [{ id: 'p.1', count: 1, holdsKey: false }] })],
    ['a negative count', JSON.stringify({ node: 'gw2', answers: [{ id: 'p.1', count: 1, holdsKey: false }, { id: 'p.2', count: -1, holdsKey: false }] })],
    ['a fractional count', JSON.stringify({ node: 'gw2', answers: [{ id: 'p.1', count: 1.5, holdsKey: false }] })],
    ['no holdsKey', JSON.stringify({ node: 'gw2', answers: [{ id: 'p.1', count: 1 }] })],
    ['an empty list', JSON.stringify({ node: 'gw2', answers: [] })],
    ['more than a message may hold', JSON.stringify({ node: 'gw2', answers: Array.from({ length: MAX_QUESTIONS_PER_MESSAGE + 1 }, (_, i) => ({ id: `p.${i}`, count: 0, holdsKey: false })) })],
  ])('answers with %s are dropped whole', (_what, text) => {
    expect(parseAnswers(text)).toBeNull();
  });
});
