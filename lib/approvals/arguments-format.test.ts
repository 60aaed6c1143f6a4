import { describe, expect, it } from 'vitest';
import { argumentPreview, formatScalar, type JsonObject, type JsonValue } from './arguments-format';

// Number texts written from RFC 8785 §3.2.2.3 (ECMAScript's Number-to-String): integers up to 1e21
// in full, from 1e21 in exponent form with a sign, no trailing zeros, -0 as 0.
describe('formatScalar', () => {
  it.each<[string, JsonValue, string, string]>([
    ['an integer', 12500, 'number', '12500'],
    ['a decimal', 12.5, 'number', '12.5'],
    ['0.1 unrounded', 0.1, 'number', '0.1'],
    ['1e21 in exponent form', 1e21, 'number', '1e+21'],
    ['an integer below 1e21 in full', 1e20 * 9, 'number', '900000000000000000000'],
    ['a small number in exponent form', 0.0000001, 'number', '1e-7'],
    ['0.000001 in full', 0.000001, 'number', '0.000001'],
    ['-0 as 0', -0, 'number', '0'],
    ['a negative decimal', -40.5, 'number', '-40.5'],
    ['a trailing zero dropped', 4.5, 'number', '4.5'],
    ['a string as it is', 'Refund "40.00" EUR', 'string', 'Refund "40.00" EUR'],
    ['an empty string', '', 'string', ''],
    ['true', true, 'boolean', 'true'],
    ['false', false, 'boolean', 'false'],
    ['null', null, 'null', 'null'],
    ['an array by its length', [1, 2, 3], 'array', '3 items'],
    ['an array of one', [[]], 'array', '1 item'],
    ['an empty array', [], 'array', '0 items'],
    ['an object by its fields', { a: 1, b: { c: 2 } }, 'object', '2 fields'],
    ['an object of one', { a: 1 }, 'object', '1 field'],
  ])('%s', (_case, value, type, text) => {
    expect(formatScalar(value)).toEqual({ type, text });
  });
});

describe('argumentPreview', () => {
  const args: JsonObject = {
    order: { id: '4411', lines: 2 },
    amount: 12500,
    tags: ['vip'],
    currency: 'EUR',
    refund: true,
    note: null,
    reason: 'customer asked',
  };

  it('shows the first three top-level scalars in the order sent, skipping objects and arrays', () => {
    expect(argumentPreview(args)).toEqual([
      { key: 'amount', value: '12500', type: 'number' },
      { key: 'currency', value: 'EUR', type: 'string' },
      { key: 'refund', value: 'true', type: 'boolean' },
    ]);
  });

  it('counts null as a scalar', () => {
    expect(argumentPreview({ a: { b: 1 }, note: null })).toEqual([{ key: 'note', value: 'null', type: 'null' }]);
  });

  it('shows named fields in the order named, dotted paths reaching into objects, missing ones left out', () => {
    expect(argumentPreview(args, ['reason', 'order.id', 'missing', 'order.lines.x', 'amount'])).toEqual([
      { key: 'reason', value: 'customer asked', type: 'string' },
      { key: 'order.id', value: '4411', type: 'string' },
      { key: 'amount', value: '12500', type: 'number' },
    ]);
  });

  it('shows a named object or array by its size', () => {
    expect(argumentPreview(args, ['order', 'tags'])).toEqual([
      { key: 'order', value: '2 fields', type: 'object' },
      { key: 'tags', value: '1 item', type: 'array' },
    ]);
  });

  it('finds a top-level key with a dot before the path', () => {
    expect(argumentPreview({ a: { b: 'nested' }, 'a.b': 'top' }, ['a.b'])).toEqual([
      { key: 'a.b', value: 'top', type: 'string' },
    ]);
  });

  it.each([
    ['no fields', null],
    ['an empty list', []],
    ['only missing fields', ['missing', 'order.missing']],
  ])('falls back to the first scalars with %s', (_case, fields) => {
    expect(argumentPreview(args, fields).map((f) => f.key)).toEqual(['amount', 'currency', 'refund']);
  });

  it('shows fewer when there are fewer scalars, none for no arguments', () => {
    expect(argumentPreview({ a: 1 })).toEqual([{ key: 'a', value: '1', type: 'number' }]);
    expect(argumentPreview({})).toEqual([]);
  });

  it.each([
    ['80 characters stay whole', 'x'.repeat(80), 'x'.repeat(80)],
    ['81 characters end in …', 'x'.repeat(81), 'x'.repeat(79) + '…'],
    ['a 1 MB string', 'y'.repeat(1_000_000), 'y'.repeat(79) + '…'],
    ['emoji are never cut', '\u{1f600}'.repeat(81), '\u{1f600}'.repeat(79) + '…'],
  ])('truncates values: %s', (_case, value, shown) => {
    expect(argumentPreview({ text: value })[0].value).toBe(shown);
  });

  it('truncates long keys too', () => {
    expect(argumentPreview({ ['k'.repeat(100)]: 1 })[0].key).toBe('k'.repeat(79) + '…');
  });

  it('shows numbers in canonical form', () => {
    expect(argumentPreview({ a: 1e21, b: 0.1, c: -0 }).map((f) => f.value)).toEqual(['1e+21', '0.1', '0']);
  });
});
