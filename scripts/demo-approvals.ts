// Demo approval requests, so a new reviewer's queue is not empty and shows what will run: each
// carries the exact arguments its tool would be called with (digested as the agent SDK and the
// gateway digest them), so the queue rows preview them and the request pages show them as a tree.
// Pending: several for each demo reviewer, one on a reviewer's own principal, one expiring within
// minutes, several needing two approvals, one already half approved (by the second reviewer, so the
// first still has it to decide) and one from an agent that sent no arguments. Decided: one denied
// and one approved and redeemed, whose arguments are gone (erased when the request became terminal).
import { argsDigest } from '@/lib/mcp/digest';
import type { approvalRequestSchema } from '@/lib/approvals/schemas';
import type { z } from 'zod';
import { tools, write, type Tool } from './lib/demo-story-kit';
import { DEMO_EMAIL_BODY, DEMO_TOOL_DESCRIPTIONS as described } from './lib/demo-approval-texts';

type Body = z.input<typeof approvalRequestSchema>;
type Arguments = Record<string, unknown>;

export type DemoApproval = {
  key: string;
  body: Body;
  /** Demo reviewers (by e-mail) who already approved it. */
  approvedBy?: string[];
  /** The demo reviewer (by e-mail) who denied it, with the reason. */
  deniedBy?: { email: string; reason: string };
  /** Approved, then its grant redeemed by the seed's key (the call ran). */
  redeemed?: boolean;
  /**
   * Staged by an agent that cannot send arguments (only the digest), as a console whose admin
   * turned COUNTERSIGN_APPROVALS_REQUIRE_ARGUMENTS off accepts it: the reviewer has only its words.
   */
  withoutArguments?: boolean;
};

const HOUR = 3600;
const demoTools = {
  ...tools,
  deleteCustomer: write('crm-mcp', 'delete_customer'),
  sendEmail: write('crm-mcp', 'send_email'),
  updateConfig: write('config-mcp', 'update_config'),
};

function demo(
  key: string,
  tool: Tool,
  args: Arguments,
  over: Partial<Body> & { summary: string; requestRef: string },
  decided: Omit<DemoApproval, 'key' | 'body'> = {},
): DemoApproval {
  const description = described[tool.name];
  const sent = decided.withoutArguments ? {} : { arguments: args };
  return {
    key: `demo-approval-${key}`,
    body: {
      organization: 'acme',
      principal: 'user_193',
      agent: 'support-bot',
      server: tool.server,
      // The tool's description, as a gateway sends it from the server's tools/list.
      tool: { name: tool.name, annotations: tool.annotations, ...(description ? { description } : {}) },
      ...sent,
      argsDigest: argsDigest(args),
      resource: null,
      pendingTtlSeconds: 8 * HOUR,
      grantTtlSeconds: 900,
      ...over,
    },
    ...decided,
  };
}

const address = (line1: string, postcode: string, city: string) => ({ line1, postcode, city, country: 'DE' });

export const demoApprovals = (reviewer: string, reviewer2: string): DemoApproval[] => [
  demo(
    'refund-4431',
    tools.refund,
    { order_id: '4431', amount: '40.00', currency: 'EUR', reason: 'damaged on arrival' },
    {
      requestRef: 'req_refund_4431',
      summary: 'Refund 40.00 EUR on order 4431: damaged on arrival',
      resource: { type: 'order', id: '4431' },
    },
  ),
  // Two refunds a summary alone would not tell apart by size; the second's summary disagrees with
  // its arguments on purpose: the request page shows both, side by side.
  demo(
    'refund-6122',
    tools.refund,
    { order_id: '6122', amount: '12.50', currency: 'EUR', reason: 'shipping fee charged twice' },
    {
      requestRef: 'req_refund_6122',
      summary: 'Refund 12.50 EUR on order 6122: shipping fee charged twice',
      resource: { type: 'order', id: '6122' },
    },
  ),
  demo(
    'refund-6120',
    tools.refund,
    { order_id: '6120', amount: '12500.00', currency: 'EUR', reason: 'parcel lost in transit' },
    {
      requestRef: 'req_refund_6120',
      summary: 'Refund 125.00 EUR on order 6120: parcel lost in transit',
      resource: { type: 'order', id: '6120' },
    },
  ),
  demo(
    'address-4490',
    tools.updateAddress,
    { order_id: '4490', address: address('Kastanienallee 12', '10435', 'Berlin'), confirmed_via: 'chat' },
    {
      requestRef: 'req_address_4490',
      summary: 'Change the shipping address of order 4490 to the one the customer confirmed by chat',
      resource: { type: 'order', id: '4490' },
    },
  ),
  demo(
    'address-5121',
    tools.updateAddress,
    { order_id: '5121', address: address('Sendlinger Straße 7', '80331', 'München'), confirmed_via: 'email' },
    {
      requestRef: 'req_address_5121',
      principal: 'user_207',
      summary: 'Correct the postcode on order 5121 (customer typo)',
      resource: { type: 'order', id: '5121' },
      pendingTtlSeconds: 6 * HOUR,
    },
  ),
  // Two approvals, one already given.
  demo(
    'cancel-7002',
    tools.cancelOrder,
    { order_id: '7002', reason: 'duplicate of order 7001', refund_to_original_method: true, notify_customer: true },
    {
      requestRef: 'req_cancel_7002',
      principal: 'user_311',
      summary: 'Cancel order 7002 before it ships: duplicate of order 7001',
      resource: { type: 'order', id: '7002' },
    },
    { approvedBy: [reviewer2] },
  ),
  // On the first demo reviewer's own principal: only someone else may decide it.
  demo(
    'address-reviewer',
    tools.updateAddress,
    { order_id: '8810', address: address('Am Wall 3', '28195', 'Bremen'), confirmed_via: 'account settings' },
    {
      requestRef: 'req_address_8810',
      principal: 'user_reviewer',
      summary: 'Update the delivery address of order 8810 (placed by Rui Reviewer)',
      resource: { type: 'order', id: '8810' },
    },
  ),
  // Expires within minutes of the seed.
  demo(
    'address-8120',
    tools.updateAddress,
    { order_id: '8120', pickup_point: { id: 'PP-DE-10115-042', carrier: 'DHL' }, keep_home_address: false },
    {
      requestRef: 'req_address_8120',
      summary: 'Redirect order 8120 to a pick-up point before the courier leaves',
      resource: { type: 'order', id: '8120' },
      pendingTtlSeconds: 6 * 60,
    },
  ),
  // An untrusted server: its hints are ignored, so two reviewers. The phone number is masked.
  demo(
    'crm-note-9100',
    tools.crmNote,
    { customer_id: '9100', note: 'Prefers contact by phone: +49 30 901820 44, weekdays after 17:00', pinned: true },
    {
      requestRef: 'req_crm_9101',
      principal: 'user_402',
      summary: 'Add a note to customer 9100: prefers contact by phone',
      resource: { type: 'customer', id: '9100' },
      pendingTtlSeconds: 3 * HOUR,
    },
  ),
  // Personal data in the arguments: the e-mail address is stored masked.
  demo(
    'delete-customer-9140',
    demoTools.deleteCustomer,
    {
      customer_id: '9140',
      email: 'marta.keller@example.com',
      erase_order_history: false,
      reason: 'erasure request under GDPR Art. 17, ticket 5521',
    },
    {
      requestRef: 'req_erasure_9140',
      principal: 'user_402',
      summary: "Delete customer 9140's account at their request (orders kept for accounting)",
      resource: { type: 'customer', id: '9140' },
    },
  ),
  // Nested objects and arrays; a value under a secret-named key is masked whole.
  demo(
    'config-checkout',
    demoTools.updateConfig,
    {
      service: 'checkout',
      environment: 'production',
      changes: {
        payment: { retry_limit: 3, timeout_ms: 2500, providers: ['stripe', 'adyen'] },
        feature_flags: { express_checkout: true, gift_cards: false },
        sample_rate: 0.25,
      },
      notify: ['ops@acme.example', '#checkout-alerts'],
      api_token: 'cfg_live_7f3a9c2e5b8d1f4a6c0e9b2d',
    },
    {
      requestRef: 'req_config_checkout_77',
      agent: 'ops-bot',
      principal: 'user_311',
      summary: 'Raise the checkout payment retry limit and add Adyen as a fallback provider',
      resource: { type: 'service', id: 'checkout' },
      pendingTtlSeconds: 4 * HOUR,
    },
  ),
  // A long text: the request page folds it.
  demo(
    'email-5521',
    demoTools.sendEmail,
    {
      to: 'lena.fischer@example.org',
      subject: 'Your refund for order 5521',
      body: DEMO_EMAIL_BODY,
      attachments: [{ name: 'credit-note-5521.pdf', size_bytes: 48213 }],
      track_opens: false,
    },
    {
      requestRef: 'req_email_5521',
      summary: 'Tell the customer of order 5521 that the refund is on its way',
      resource: { type: 'order', id: '5521' },
    },
  ),
  // From an agent that sends no arguments: the queue and the page say so, in warning style.
  demo(
    'refund-5203',
    tools.refund,
    { order_id: '5203', amount: '75.00', currency: 'EUR', reason: 'late delivery' },
    {
      requestRef: 'req_refund_5203',
      agent: 'legacy-billing-agent',
      summary: 'Refund 75.00 EUR on order 5203: delivered nine days late',
      resource: { type: 'order', id: '5203' },
    },
    { withoutArguments: true },
  ),
  // Decided: their arguments were erased when they became terminal.
  demo(
    'refund-3990',
    tools.refund,
    { order_id: '3990', amount: '260.00', currency: 'EUR', reason: 'item never arrived' },
    {
      requestRef: 'req_refund_3990',
      summary: 'Refund 260.00 EUR on order 3990: the customer says the item never arrived',
      resource: { type: 'order', id: '3990' },
    },
    {
      deniedBy: {
        email: reviewer2,
        reason: 'Tracking shows it delivered and signed for; asked the customer to check with neighbours (demo data).',
      },
    },
  ),
  demo(
    'address-4471',
    tools.updateAddress,
    { order_id: '4471', address: address('Hafenstraße 40', '20359', 'Hamburg'), confirmed_via: 'phone' },
    {
      requestRef: 'req_address_4471',
      summary: 'Change the shipping address of order 4471 to the new flat',
      resource: { type: 'order', id: '4471' },
    },
    { approvedBy: [reviewer], redeemed: true },
  ),
];
