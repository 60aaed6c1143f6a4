import { describe, expect, it } from 'vitest';
import { mask, maskDeep, maskKinds, maskText } from './mask';
import { MASKED, t } from './samples';

describe('maskText: every kind', () => {
  it.each(MASKED)('%s: %j', (kind, input, expected) => {
    expect(maskText(input)).toEqual({ text: expected, kinds: [kind] });
  });

  it('covers every kind it declares', () => {
    expect(new Set(MASKED.map(([kind]) => kind))).toEqual(new Set(maskKinds));
  });
});

describe('maskText: near misses are left alone', () => {
  it.each([
    ['16 digits failing Luhn', '4111 1111 1111 1112'],
    ['a plain run failing Luhn', '1234567812345678'],
    ['a long reference number', 'ref 12345678901234567890'],
    ['an ISO date', 'due 2026-11-30'],
    ['an RFC 3339 time', 'at 2026-11-30T12:00:00+02:00'],
    ['two dates', '2026-11-30 2026-12-01'],
    ['a European date and time', 'am 30.11.2026 10:00'],
    ['an amount and an order number', 'Refund 40.00 EUR on order 4411'],
    ['a signed amount', 'balance +40.00 EUR'],
    ['thousands separators', 'total 1,234,567.89 USD'],
    ['a version', 'server 2.3.0, protocol 2025-11-25'],
    ['an IP address', 'from 192.168.10.254'],
    ['a clock time', 'at 12:00:00'],
    [
      'an English sentence',
      'The agent refunded the customer after the reviewer approved it, and nothing else was changed.',
    ],
    ['English about credentials', 'Send the bearer token in the Authorization header; Basic information only.'],
    ['a password reset', 'Password reset requested for user_193'],
    ['a UUID', 'approval 123e4567-e89b-12d3-a456-426614174000'],
    ['a prefixed UUID', 'req_8f2c4a1b-0e9d-4c7b-a6f5-3e2d1c0b9a87'],
    ['a labelled digest', `args sha256:${'ab12'.repeat(16)}`],
    ['a camelCase name', 'handler ProcessPayment2024RefundHandlerV2Service'],
    ['a path', 'wrote /Users/JohnSmith/Documents/Report2024FinalVersion2'],
    ['a temporary folder', 'wrote /tmp/cs-gateway-args-oSRMxj/refund-4411.md'],
    ['a macOS temporary path', 'at /var/folders/xy/7k2q9p1d0m4v3b8n6c5x_h0000gn/T/upload-Zx9Qm2/report.pdf'],
    ['invalid SSN area 000', '000-12-3456'],
    ['invalid SSN area 666', '666-12-3456'],
    ['invalid SSN area 9xx', '912-34-5678'],
    ['invalid SSN group 00', '123-00-4567'],
    ['invalid SSN serial 0000', '123-45-0000'],
    ['a word starting sk-', 'pip install sk-learn-model-selection-tools'],
    ['a handle', 'ping @billing-team'],
    ['an empty string', ''],
  ])('%s', (_name, input) => {
    expect(maskText(input)).toEqual({ text: input, kinds: [] });
  });
});

describe('maskText: several secrets in one string', () => {
  it('masks each and reports each kind once, in a fixed order', () => {
    const input = t(
      'jane@example.com paid with 4111 1111 1111 1111 using Bearer abc123def456ghi789 ',
      'from +1 555 123 4567; backup bob@example.org, ',
      'ghp_',
      'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
    );
    expect(maskText(input)).toEqual({
      text:
        '[masked:email] paid with [masked:card_number] using Bearer [masked:bearer_token] ' +
        'from [masked:phone]; backup [masked:email], [masked:github_token]',
      kinds: ['github_token', 'bearer_token', 'email', 'card_number', 'phone'],
    });
  });
});

describe('maskText: idempotent', () => {
  it.each(MASKED)('%s: %j', (_kind, input) => {
    const once = maskText(input).text;
    expect(maskText(once)).toEqual({ text: once, kinds: [] });
  });

  it('leaves every placeholder alone', () => {
    const all = maskKinds.map((kind) => `x [masked:${kind}] y`).join('\n');
    expect(maskText(all)).toEqual({ text: all, kinds: [] });
  });
});

describe('maskText: linear time', () => {
  const MB = 1 << 20;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  it.each([
    ['one long word', fill('a')],
    ['digits', fill('1')],
    ['digit groups', fill('12-')],
    ['spaced digits', fill('1 ')],
    ['at signs', fill('a@')],
    ['phone prefixes', fill('+1 (')],
    ['BEGIN markers', fill('-----BEGIN ')],
    ['JWT-like', fill('eyJabcdef.')],
    ['labels', fill('password=')],
    ['prose with numbers', fill('Refund 40.00 EUR on order 4411, jane@example.com, 2026-11-30. ')],
  ])('1 MiB of %s in under a second', (_name, input) => {
    const started = performance.now();
    maskText(input);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('maskDeep', () => {
  it('masks strings at any depth, keeps keys and other values, and does not mutate', () => {
    const input = {
      summary: 'mail jane@example.com',
      nested: { list: ['ok', 'SSN 123-45-6789', 7, null, true], 'jane@example.com': 'key stays' },
    };
    const copy = structuredClone(input);
    expect(maskDeep(input)).toEqual({
      value: {
        summary: 'mail [masked:email]',
        nested: { list: ['ok', 'SSN [masked:ssn]', 7, null, true], 'jane@example.com': 'key stays' },
      },
      kinds: ['email', 'ssn'],
    });
    expect(input).toEqual(copy);
  });

  it('passes non-string leaves through', () => {
    expect(maskDeep(42)).toEqual({ value: 42, kinds: [] });
    expect(maskDeep('Bearer abc123def456')).toEqual({ value: 'Bearer [masked:bearer_token]', kinds: ['bearer_token'] });
  });
});

describe('mask: an optional field', () => {
  it.each([
    ['null', null, null],
    ['undefined', undefined, undefined],
    ['the empty string', '', ''],
    ['plain text', 'refund order 4411', 'refund order 4411'],
    ['an e-mail address', 'write to ada@example.com', 'write to [masked:email]'],
  ])('%s', (_, input, expected) => {
    expect(mask(input)).toBe(expected);
  });
});
