// The canonical hash of a definition and which parts of it differ (docs/catalog.md "Pinning").
import { describe, expect, it } from 'vitest';
import { definitionDiffers, definitionHash, pinnedDefinition } from './definition';

const refund = {
  name: 'refund_payment',
  title: 'Refund',
  description: 'Refunds a payment. Only for captured payments.',
  inputSchema: { type: 'object', properties: { id: { type: 'string' }, amount: { type: 'number' } }, required: ['id'] },
  annotations: { readOnlyHint: false, destructiveHint: true },
};

describe('definitionHash', () => {
  it('is sha256: and 64 hex digits, the same whatever the order of keys at any depth', () => {
    const reordered = {
      annotations: { destructiveHint: true, readOnlyHint: false },
      inputSchema: {
        required: ['id'],
        properties: { amount: { type: 'number' }, id: { type: 'string' } },
        type: 'object',
      },
      description: refund.description,
      title: 'Refund',
      name: 'refund_payment',
    };
    const h = definitionHash(pinnedDefinition(refund));
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(definitionHash(pinnedDefinition(reordered))).toBe(h);
  });

  it('keeps the six parts only, null and absent alike, and changes with any of them', () => {
    const h = definitionHash(pinnedDefinition(refund));
    const withExtras = { ...refund, outputSchema: null, annotations: { ...refund.annotations, title: null } };
    expect(definitionHash(pinnedDefinition(withExtras))).toBe(h);
    expect(pinnedDefinition({ ...refund, _meta: { x: 1 } } as never)).not.toHaveProperty('_meta');
    for (const change of [
      { title: 'Refund!' },
      { description: 'Refunds a payment.' },
      { inputSchema: { ...refund.inputSchema, required: [] } },
      { outputSchema: { type: 'object' } },
      { annotations: { readOnlyHint: true } },
    ])
      expect(definitionHash(pinnedDefinition({ ...refund, ...change }))).not.toBe(h);
    // An array's order is meaning, not form.
    const swapped = { ...refund, inputSchema: { ...refund.inputSchema, required: ['amount', 'id'] } };
    const other = { ...refund, inputSchema: { ...refund.inputSchema, required: ['id', 'amount'] } };
    expect(definitionHash(pinnedDefinition(swapped))).not.toBe(definitionHash(pinnedDefinition(other)));
  });
});

describe('definitionDiffers', () => {
  it('names the parts that differ, in order; every present part of a new tool', () => {
    const a = pinnedDefinition(refund);
    expect(definitionDiffers(a, a)).toEqual([]);
    expect(
      definitionDiffers(
        a,
        pinnedDefinition({ ...refund, description: 'x', annotations: { readOnlyHint: true }, outputSchema: {} }),
      ),
    ).toEqual(['description', 'outputSchema', 'annotations']);
    expect(definitionDiffers(a, pinnedDefinition({ ...refund, title: undefined }))).toEqual(['title']);
    expect(definitionDiffers(null, a)).toEqual(['title', 'description', 'inputSchema', 'annotations']);
  });
});
