// docs/configuration.md and the schema name the same variables: every variable the schema reads is
// documented there, and every variable a table there documents is one the schema reads.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configVariables } from './schema';

const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/configuration.md'), 'utf8');

/** The variables in the first cell of each table row (`NAME`, or `A` / `B`), the header and rule rows left out. */
const documented = [
  ...new Set(
    doc
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])),
  ),
];

describe('docs/configuration.md', () => {
  it('documents tables of variables (so the comparison below compares something)', () => {
    expect(documented.length).toBeGreaterThan(20);
  });

  it.each(Object.keys(configVariables))('documents %s', (name) => {
    expect(doc).toContain(`\`${name}\``);
  });

  it('documents no variable the schema does not read', () => {
    expect(documented.filter((name) => !(name in configVariables))).toEqual([]);
  });
});
