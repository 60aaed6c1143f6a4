// How a call's rounds read on its record page (docs/api.md `observed.rounds`): the lines written by hand.
import { describe, expect, it } from 'vitest';
import { roundLabel, roundTime } from './present';
import type { ObservedRound } from './schemas';

describe('a round on the record page', () => {
  it.each<[number, string]>([
    [0, '+0.0 s'],
    [412, '+0.4 s'],
    [1299, '+1.2 s'],
    [59_999, '+59.9 s'],
    [60_000, '+1 min 0 s'],
    [125_400, '+2 min 5 s'],
    [3_780_000, '+1 h 3 min'],
    [2_147_483_647, '+596 h 31 min'],
  ])('%i ms reads %s', (atMs, text) => {
    expect(roundTime(atMs)).toBe(text);
  });

  it.each<[ObservedRound, string]>([
    [
      { atMs: 0, by: 'server', asked: ['elicitation_form'], requests: 2 },
      'server asked: elicitation (form), 2 requests',
    ],
    [{ atMs: 0, by: 'server', asked: ['elicitation_url'], requests: 1 }, 'server asked: elicitation (URL), 1 request'],
    [
      { atMs: 0, by: 'server', asked: ['elicitation_form', 'sampling', 'roots'], requests: 3 },
      'server asked: elicitation (form), sampling, roots, 3 requests',
    ],
    [{ atMs: 0, by: 'server', asked: [], requests: 0 }, 'server asked: input, 0 requests'],
    [{ atMs: 0, by: 'gateway', asked: ['approval'], requests: 1 }, 'gateway: approval pending'],
  ])('%j reads "%s"', (round, text) => {
    expect(roundLabel(round)).toBe(text);
  });
});
