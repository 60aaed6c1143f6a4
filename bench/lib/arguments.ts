// Tool arguments for the approval benchmarks, as an agent stages them with a request
// (docs/api.md, `arguments` on POST /api/v1/approvals): realistic shapes whose strings go through
// the masker like real ones (an e-mail address, prose), each with its digest computed as the agent
// SDK computes it (lib/mcp/digest.ts), unique by `n`.
import { argsDigest } from '@/lib/mcp/digest';
import { canonicalJson } from '@/lib/json/canonical';

export type Staged = { arguments: Record<string, unknown>; argsDigest: string };

const PROSE =
  'Thank you for your patience while we looked into your order. The courier confirmed that the parcel was ' +
  'damaged in transit, so we have refunded the full amount to the card you paid with; depending on your bank ' +
  'it can take three to five working days to appear on your statement. You do not need to send the items back. ' +
  'If you would still like the same products, reply to this message and we will place a new order for you at ' +
  'no extra cost, with express delivery. The credit note for your records is attached. ';

/** The arguments with their digest, as the body of a staging request carries them. */
export const staged = (args: Record<string, unknown>): Staged => ({ arguments: args, argsDigest: argsDigest(args) });

/** A refund's arguments (about 100 bytes), as most staged writes are. */
export const refundArguments = (n: number | string) => ({
  order_id: String(n),
  amount: `${(Number.parseInt(String(n).replace(/\D/g, '') || '0', 10) % 400) + 10}.50`,
  currency: 'EUR',
  reason: 'damaged on arrival',
});

/**
 * A note on an order, as an agent stages an update_note: its e-mail address masked on the way in,
 * the note itself prose; with `bytes`, the note fills the canonical JSON to exactly that many bytes
 * (plain ASCII, so one character is one byte).
 */
export function noteArguments(n: number | string, bytes?: number): Record<string, unknown> {
  const args = {
    order_id: String(n),
    customer: `customer-${n}@example.com`,
    note: 'Deliver after 17:00, ring twice.',
    tags: ['delivery', 'customer-request'],
    notify_customer: true,
    priority: 2,
  };
  if (bytes === undefined) return args;
  const room = bytes - Buffer.byteLength(canonicalJson({ ...args, note: '' }));
  if (room < 0) throw new Error(`noteArguments: ${bytes} bytes is too small`);
  return { ...args, note: PROSE.repeat(Math.ceil(room / PROSE.length) + 1).slice(0, room) };
}
