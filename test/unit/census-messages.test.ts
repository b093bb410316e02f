// The owner census's messages between gateways: one question (and its answer) alone in the form
// every version reads, several of one turn together, and anything malformed dropped whole.
import { describe, expect, it } from 'vitest';
import { answersMessage, MAX_QUESTIONS_PER_MESSAGE, parseAnswers, parseQuestions, questionsMessage } from '../../services/gateway/ownership/census-messages.js';

const q = (n: number) => ({ id: `p.${n}`, owner: `acct-${n}`, channel: n % 2 === 0 ? `c${n}.example.net` : null });

describe('census messages', () => {
  it('a lone question travels in the one-question form, and several of a turn in one message', () => {
    expect(JSON.parse(questionsMessage('gw1', [q(1)]))).toEqual({ id: 'p.1', owner: 'acct-1', channel: null, from: 'gw1' });
    expect(parseQuestions(questionsMessage('gw1', [q(1)]))).toEqual({ from: 'gw1', questions: [q(1)], single: true });
    const many = [q(1), q(2), q(3)];
    expect(parseQuestions(questionsMessage('gw1', many))).toEqual({ from: 'gw1', questions: many, single: false });
  });

  it('each message of questions is answered in its own form', () => {
    const one = { id: 'p.1', count: 2, holdsKey: true };
    expect(JSON.parse(answersMessage('gw2', [one], true))).toEqual({ ...one, node: 'gw2' });
    expect(parseAnswers(answersMessage('gw2', [one], true))).toEqual({ node: 'gw2', answers: [one] });
    const both = [one, { id: 'p.2', count: 0, holdsKey: false }];
    expect(parseAnswers(answersMessage('gw2', both, false))).toEqual({ node: 'gw2', answers: both });
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
    ['a negative count', JSON.stringify({ node: 'gw2', answers: [{ id: 'p.1', count: 1, holdsKey: false }, { id: 'p.2', count: -1, holdsKey: false }] })],
    ['a fractional count', JSON.stringify({ node: 'gw2', answers: [{ id: 'p.1', count: 1.5, holdsKey: false }] })],
    ['no holdsKey', JSON.stringify({ node: 'gw2', answers: [{ id: 'p.1', count: 1 }] })],
    ['an empty list', JSON.stringify({ node: 'gw2', answers: [] })],
    ['more than a message may hold', JSON.stringify({ node: 'gw2', answers: Array.from({ length: MAX_QUESTIONS_PER_MESSAGE + 1 }, (_, i) => ({ id: `p.${i}`, count: 0, holdsKey: false })) })],
  ])('answers with %s are dropped whole', (_what, text) => {
    expect(parseAnswers(text)).toBeNull();
  });
});
