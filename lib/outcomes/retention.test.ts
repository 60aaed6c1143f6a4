import { describe, expect, it } from 'vitest';
import { describeRetention, parseRetentionSetting, RetentionConfigError } from './retention';

describe('parseRetentionSetting', () => {
  it.each<[string | undefined, ReturnType<typeof parseRetentionSetting>]>([
    [undefined, { enabled: true, days: 90 }],
    ['', { enabled: true, days: 90 }],
    ['  ', { enabled: true, days: 90 }],
    ['30', { enabled: true, days: 30 }],
    [' 7 ', { enabled: true, days: 7 }],
    ['1', { enabled: true, days: 1 }],
    ['36500', { enabled: true, days: 36_500 }],
    ['off', { enabled: false }],
    ['OFF', { enabled: false }],
  ])('%j → %j', (raw, setting) => {
    expect(parseRetentionSetting(raw)).toEqual(setting);
  });

  it.each(['0', '-1', '1.5', '1e3', '0x10', 'ninety', '90d', '36501', '99999999999999999999', 'no', 'false'])(
    'refuses %j with a message naming the variable and what it accepts',
    (raw) => {
      expect(() => parseRetentionSetting(raw)).toThrow(RetentionConfigError);
      expect(() => parseRetentionSetting(raw)).toThrow(
        `OUTCOME_RETENTION_DAYS must be a whole number of days from 1 to 36500, or "off" to keep outcome records forever (it is ${JSON.stringify(raw)}; unset means 90)`,
      );
    },
  );
});

describe('describeRetention', () => {
  it.each<[ReturnType<typeof parseRetentionSetting>, string]>([
    [{ enabled: true, days: 90 }, 'Outcome records are kept 90 days after they arrive'],
    [{ enabled: true, days: 1 }, 'Outcome records are kept 1 day after they arrive'],
    [{ enabled: false }, 'Outcome records are kept forever (OUTCOME_RETENTION_DAYS=off)'],
  ])('%j', (setting, text) => {
    expect(describeRetention(setting)).toBe(text);
  });
});
