import { describe, expect, it } from 'vitest';
import { parsePartitionInterval, PartitionConfigError } from './partitions';

describe('OUTCOME_PARTITION_INTERVAL', () => {
  it.each([
    [undefined, 'month'],
    ['', 'month'],
    ['  ', 'month'],
    ['month', 'month'],
    ['Week', 'week'],
    ['day', 'day'],
    ['quarter', 'quarter'],
    ['year', 'year'],
  ])('%j reads as %s', (raw, unit) => expect(parsePartitionInterval(raw)).toBe(unit));

  it.each(['monthly', '1 month', '30d', 'hour'])('refuses %j, naming the variable and the choices', (raw) => {
    expect(() => parsePartitionInterval(raw)).toThrow(PartitionConfigError);
    expect(() => parsePartitionInterval(raw)).toThrow(
      /OUTCOME_PARTITION_INTERVAL must be one of day, week, month, quarter, year/,
    );
  });
});
