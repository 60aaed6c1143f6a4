import { describe, expect, it } from 'vitest';
import { lookalikeGroups, skeleton } from './confusables';

// Lookalikes are written as escapes so a reader sees which letter is not Latin.
describe('skeleton', () => {
  it.each([
    ['ASCII is only lower-cased', 'PayPal', 'paypal'],
    ['Cyrillic р and а', '\u0440\u0430ypal', 'paypal'],
    ['Cyrillic capitals', '\u0420\u0410YPAL', 'paypal'],
    ['Greek omicron', 't\u03bfken', 'token'],
    ['Greek capitals', '\u03a4\u039f\u039a\u0395\u039d', 'token'],
    ['fullwidth letters', '\uff30\uff41\uff59\uff30\uff41\uff4c', 'paypal'],
    ['fullwidth digits', 'file\uff11', 'file1'],
    ['mathematical bold letters', '\u{1d429}\u{1d41a}\u{1d42c}\u{1d42c}', 'pass'],
    ['a ligature', '\ufb01le', 'file'],
    ['zero-width joiner inside', 'pass\u200dword', 'password'],
    ['zero-width space inside', 'to\u200bken', 'token'],
    ['byte order mark in front', '\ufeffkey', 'key'],
    ['word joiner inside', 'api\u2060key', 'apikey'],
    ['soft hyphen inside', 'pa\u00adss', 'pass'],
    ['right-to-left mark inside', 'ab\u200fc', 'abc'],
    ['combining accent', 'cafe\u0301', 'cafe'],
    ['precomposed accent', 'caf\u00e9', 'cafe'],
    ['Cyrillic with diaeresis', '\u04d2', 'a'],
    ['sharp s folds to ss', 'Stra\u00dfe', 'strasse'],
    ['Latin dotless i', '\u0131d', 'id'],
    ['Cyrillic Ze drawn like 3', '\u0417OO', '3oo'],
    ['Cyrillic capital En is drawn like H', '\u041d', 'h'],
    ['its small letter is not drawn like h', '\u043d', '\u043d'],
    ['ASCII digit one stays apart from l', 'item1', 'item1'],
    ['ASCII rn stays apart from m', 'rn', 'rn'],
    ['other scripts are kept', '\u91d1\u984d', '\u91d1\u984d'],
    ['empty', '', ''],
  ])('%s', (_case, input, expected) => {
    expect(skeleton(input)).toBe(expected);
  });

  it('is idempotent', () => {
    for (const s of ['\u0440\u0430ypal', 'Stra\u00dfe', 'pass\u200dword', '\uff30\uff41\uff59']) {
      expect(skeleton(skeleton(s))).toBe(skeleton(s));
    }
  });
});

describe('lookalikeGroups', () => {
  it.each([
    ['a Cyrillic lookalike', ['paypal', '\u0440\u0430ypal'], [['paypal', '\u0440\u0430ypal']]],
    ['distinct keys', ['amount', 'currency'], []],
    ['the same key twice is not a group', ['amount', 'amount'], []],
    [
      'three spellings, in order of appearance, the others left out',
      ['to\u200bken', 'token', 'other', 't\u03bfken', 'token'],
      [['to\u200bken', 'token', 't\u03bfken']],
    ],
    [
      'two groups, in order of their first key',
      ['b', 'password', 'a', 'p\u0430ssword', '\uff42'],
      [
        ['b', '\uff42'],
        ['password', 'p\u0430ssword'],
      ],
    ],
    ['keys differing only in case', ['Amount', 'amount'], [['Amount', 'amount']]],
    ['no keys', [], []],
  ])('%s', (_case, keys, expected) => {
    expect(lookalikeGroups(keys)).toEqual(expected);
  });
});
