// The rounds a call's requestState carries (round-state.ts): what a round is noted as (who asked,
// which kinds, how many requests, never what), packed small, and refused when a state carries
// rounds this gateway would not have packed. Expected values are written by hand from
// docs/gateway.md "Calls that take rounds" and docs/api.md `observed.rounds`.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ObservedRound } from '../outcomes/schemas';
import { addRound, approvalRound, packRounds, serverRound, unpackRounds } from './round-state';

const START = Date.UTC(2026, 11, 7, 12, 0, 0);

describe("a round's note", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(START + 1234);
  });
  afterEach(() => vi.useRealTimers());

  it.each<[string, unknown, Omit<ObservedRound, 'atMs' | 'by'>]>([
    [
      'one form elicitation',
      { step1: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: {} } } },
      { asked: ['elicitation_form'], requests: 1 },
    ],
    [
      'a URL elicitation, sampling and roots, in the order the record names them',
      {
        r: { method: 'roots/list' },
        s: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
        u: { method: 'elicitation/create', params: { mode: 'url', message: 'Sign in', url: 'https://x.test' } },
      },
      { asked: ['elicitation_url', 'sampling', 'roots'], requests: 3 },
    ],
    [
      'two form elicitations: one kind, two requests',
      {
        a: { method: 'elicitation/create', params: { mode: 'form' } },
        b: { method: 'elicitation/create', params: {} },
      },
      { asked: ['elicitation_form'], requests: 2 },
    ],
    ['a method the record has no kind for: counted, not named', { x: { method: 'ping' } }, { asked: [], requests: 1 }],
    ['no input requests', undefined, { asked: [], requests: 0 }],
    [
      'more requests than are counted',
      Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k${i}`, { method: 'roots/list' }])),
      { asked: ['roots'], requests: 1000 },
    ],
  ])("a server's round with %s", (_name, inputRequests, expected) => {
    expect(serverRound(inputRequests, START)).toEqual({ atMs: 1234, by: 'server', ...expected });
  });

  it("the gateway's approval round, and a clock that went back counts as 0", () => {
    expect(approvalRound(START)).toEqual({ atMs: 1234, by: 'gateway', asked: ['approval'], requests: 1 });
    expect(approvalRound(START + 5000).atMs).toBe(0);
  });
});

const server = (atMs: number): ObservedRound => ({ atMs, by: 'server', asked: ['sampling'], requests: 1 });
const gate = (atMs: number): ObservedRound => ({ atMs, by: 'gateway', asked: ['approval'], requests: 1 });

describe('adding a round', () => {
  it('keeps the order, folds an approval still pending into its first round, and keeps the first eight', () => {
    let rounds: ObservedRound[] = [];
    rounds = addRound(rounds, gate(0));
    rounds = addRound(rounds, gate(30_000));
    rounds = addRound(rounds, server(31_000));
    expect(rounds).toEqual([gate(0), server(31_000)]);
    for (let i = 0; i < 10; i++) rounds = addRound(rounds, server(40_000 + i));
    expect(rounds).toHaveLength(8);
    expect(rounds.at(-1)).toEqual(server(40_005));
  });
});

describe('rounds in the state', () => {
  it('pack to three numbers each and back', () => {
    const rounds: ObservedRound[] = [
      gate(0),
      { atMs: 412, by: 'server', asked: ['elicitation_form', 'sampling'], requests: 2 },
      { atMs: 2_147_483_647, by: 'server', asked: ['elicitation_url', 'roots'], requests: 1000 },
    ];
    // Bits: 1 the gateway, then 2, 4, 8, 16, 32 for form, url, sampling, roots, approval.
    expect(packRounds(rounds)).toEqual([
      [0, 33, 1],
      [412, 10, 2],
      [2_147_483_647, 20, 1000],
    ]);
    expect(unpackRounds(packRounds(rounds))).toEqual(rounds);
  });

  it('none: nothing in the state, an empty list out of it', () => {
    expect(packRounds([])).toBeUndefined();
    expect(unpackRounds(undefined)).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['nine rounds', Array.from({ length: 9 }, () => [0, 8, 1])],
    ['not a list', { 0: [0, 8, 1] }],
    ['a round of two numbers', [[0, 8]]],
    ['a round of four numbers', [[0, 8, 1, 0]]],
    ['bits past the kinds', [[0, 64, 1]]],
    ['negative bits', [[0, -1, 1]]],
    ['fractional bits', [[0, 8.5, 1]]],
    ['a negative time', [[-1, 8, 1]]],
    ['a time past int4', [[2_147_483_648, 8, 1]]],
    ['too many requests', [[0, 8, 1001]]],
    ['text in place of a number', [['0', 8, 1]]],
    ['a long string', [['x'.repeat(100_000), 8, 1]]],
  ])('refuses %s (the state is then refused)', (_name, packed) => {
    expect(unpackRounds(packed)).toBeNull();
  });
});
