// Tool catalogs of any size for bench:catalog: definitions shaped like real servers' (a verb and a noun for a name, two or three sentences of description drawn
// from a vocabulary, a handful of parameters, annotations on most), the same for the same seed.
import type { ToolDefinition } from '@/lib/catalog/lint';

const VERBS = ['get', 'list', 'search', 'create', 'update', 'delete', 'send', 'archive', 'export', 'refund'];
const NOUNS = [
  'invoice',
  'customer',
  'order',
  'ticket',
  'shipment',
  'subscription',
  'payment',
  'message',
  'report',
  'webhook',
  'project',
  'document',
  'calendar_event',
  'contact',
  'product',
  'coupon',
];
const OPENINGS: Record<string, string> = {
  get: 'Returns one {noun} by its identifier, with its status, owner and the dates it changed.',
  list: 'Lists {noun} records page by page, newest first, filtered by status, owner or date range.',
  search: 'Finds {noun} records whose text or metadata match a query, ranked by relevance.',
  create: 'Creates a new {noun} from the fields given and returns its identifier.',
  update: 'Changes the fields given on an existing {noun}, leaving the others as they are.',
  delete: 'Deletes a {noun} permanently, together with its attachments and history.',
  send: 'Sends a {noun} to its recipients by e-mail, with a copy kept in the outbox.',
  archive: 'Moves a {noun} to the archive, where it stays readable but no longer appears in lists.',
  export: 'Writes every {noun} of an account to a CSV file and returns a link to download it.',
  refund: 'Refunds a {noun} in full or in part to the card or account it was paid from.',
};
const CLAUSES = [
  'Only accounts with the billing scope may call it.',
  'The identifier must belong to the current workspace.',
  'Requires the approval of an administrator above the workspace limit.',
  'Never use it for test accounts; use the sandbox server instead.',
  'Rate limited to ten calls per minute per workspace.',
  'Amounts are in the minor unit of the currency, as integers.',
  'Dates are ISO 8601 in UTC; times without a zone are rejected.',
  'Results include the fields the caller is allowed to see and nothing else.',
  'Cannot be undone once the confirmation e-mail has left.',
  'Unless a reason is given, the default reason is recorded in the audit log.',
  'Pagination uses an opaque cursor returned with each page.',
  'Large responses are truncated to the first thousand items.',
];

function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
}

/** `count` tool definitions, named uniquely, the same for the same `seed`. */
export function catalogOf(count: number, seed = 1): ToolDefinition[] {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  return Array.from({ length: count }, (_, i) => {
    const verb = VERBS[i % VERBS.length];
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length];
    const round = Math.floor(i / (VERBS.length * NOUNS.length));
    const readOnly = verb === 'get' || verb === 'list' || verb === 'search';
    const sentences = [OPENINGS[verb].replace('{noun}', noun.replace('_', ' ')), pick(CLAUSES), pick(CLAUSES)];
    return {
      name: round ? `${verb}_${noun}_v${round + 1}` : `${verb}_${noun}`,
      title: `${verb[0].toUpperCase()}${verb.slice(1)} ${noun.replace('_', ' ')}`,
      description: sentences.join(' '),
      inputSchema: {
        type: 'object',
        properties: {
          [`${noun}_id`]: { type: 'string', description: `The ${noun.replace('_', ' ')} identifier.` },
          ...(verb === 'search' ? { query: { type: 'string', description: 'Words to look for.' } } : {}),
          ...(readOnly ? { limit: { type: 'integer', minimum: 1, maximum: 200 } } : {}),
          ...(verb === 'refund'
            ? { amount: { type: 'integer' }, currency: { type: 'string', enum: ['EUR', 'USD'] } }
            : {}),
        },
        required: [`${noun}_id`],
      },
      annotations:
        random() < 0.1
          ? undefined
          : readOnly
            ? { readOnlyHint: true, openWorldHint: false }
            : { readOnlyHint: false, destructiveHint: verb === 'delete', idempotentHint: verb === 'update' },
    };
  });
}
