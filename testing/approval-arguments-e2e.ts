// What the browser specs of approval arguments share (e2e/approval-arguments*.spec.ts): requests
// staged through the API with arguments of their own, whose values are distinctive enough to be
// looked for in a page's HTML or the server's log.
import { expect, type APIRequestContext } from '@playwright/test';
import { argsDigest } from '../lib/mcp/digest';
import { approvalBody, create, uniq } from './approvals-api';

/** A long note on several lines: folded on the request page. */
export const longNote = (word: string) =>
  [
    `Customer called twice about order 4490; ${word} is the reference they quoted.`,
    'They asked for the refund to go back to the original card, not store credit.',
    'The parcel was returned on 2 December and scanned at the warehouse.',
    'Finance agreed to refund the full amount including shipping.',
    'Close the ticket once the refund shows on the statement.',
  ].join('\n');

/**
 * Arguments with every shape the tree shows, and values found nowhere else: `tag` makes them
 * distinctive (`ord_<tag>`, `Zebra<tag>`).
 */
export function distinctiveArguments(tag: string) {
  return {
    order_id: `ord_${tag}`,
    amount: 12500,
    currency: 'EUR',
    exact: 0.000001,
    huge: 1e21,
    refund_to_card: true,
    coupon: null,
    customer: {
      email: 'jane.doe@example.com',
      address: { city: `Lyon${tag}`, lines: ['1 rue de la République', 'Bâtiment B'] },
    },
    items: [
      { sku: 'SKU-1', qty: 2 },
      { sku: 'SKU-2', qty: 1 },
    ],
    api_token: `tok_${tag}_0123456789abcdef`,
    note: longNote(`Zebra${tag}`),
  };
}

/** Stages a one-approval request carrying these arguments (and their digest); the API's answer and the summary. */
export async function stageWithArguments(
  request: APIRequestContext,
  args: Record<string, unknown>,
  over: Record<string, unknown> = {},
): Promise<{ id: string; version: number; summary: string }> {
  const summary = (over.summary as string | undefined) ?? `Refund order 4490 in full ${uniq('s')}`;
  const res = await create(request, approvalBody({ summary, arguments: args, argsDigest: argsDigest(args), ...over }));
  expect(res.status(), await res.text()).toBe(201);
  return { ...(await res.json()), summary };
}
