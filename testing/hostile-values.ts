// For the hostile-input tests: text that is hard to store or to get right, and paths into JSON values.
import fc from 'fast-check';

// ── Hostile text ─────────────────────────────────────────────────────────────────────────

// What PostgreSQL cannot store (NUL) or what is not Unicode at all (half a surrogate pair), and
// what is legal but easy to get wrong: bidi overrides, zero-width and invisible characters,
// emoji sequences, stacked combining marks, line and paragraph separators, noncharacters.
export const UNSTORABLE = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff', 'a\ud83d', '\ude00b'];
export const AWKWARD = [
  '\u202e',
  '\u202d',
  '\u2066',
  '\u2069',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u061c',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇫🇷',
  '\u{1f600}',
  'e\u0301\u0301\u0301\u0301',
  'Z\u0351\u0352\u0353\u0354\u0355',
  '\u2028',
  '\u2029',
  '\u0085',
  '\uffff',
  '\ufffe',
  '\u{10ffff}',
  '\r\n',
  '\t',
  '\u001b[31m',
  'Set-Cookie: a=b',
  '"',
  "'",
  '\\',
  '<script>',
  '%00',
  'ǅ',
  'ß',
  'İ',
];
export const hostileText = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...AWKWARD) },
      { weight: 1, arbitrary: fc.constantFrom(...UNSTORABLE) },
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => parts.join(''))
  .filter((s) => s.length > 0);
export const unstorable = (s: string) =>
  s.includes('\u0000') || /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

// ── JSON paths ─────────────────────────────────────────────────────────────────────────────

export type JsonType = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';
export const jsonType = (v: unknown): JsonType =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as JsonType);

/** Every path under `value` (objects and arrays included), dotted as problem+json names them. */
export function paths(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const p = prefix ? `${prefix}.${k}` : k;
    return [p, ...paths(v, p)];
  });
}

export function getAt(value: unknown, path: string): unknown {
  return path ? path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], value) : value;
}

/** A copy of `value` with `path` set to `to` (an own, enumerable property even for `__proto__`). */
export function setAt<T>(value: T, path: string, to: unknown): T {
  const copy = structuredClone(value);
  const keys = path.split('.');
  const last = keys.pop()!;
  const parent = getAt(copy, keys.join('.')) as Record<string, unknown>;
  Object.defineProperty(parent, last, { value: to, enumerable: true, writable: true, configurable: true });
  return copy;
}
