// Demo approval requests, so a new reviewer's queue is not empty: several for each demo reviewer,
// one on a reviewer's own principal, one expiring within minutes, one needing two approvals and one
// already half approved (by the second reviewer, so the first still has it to decide).
import { createHash } from 'node:crypto';
import type { ApprovalRequestBody } from '@/lib/approvals/schemas';
import { tools } from './lib/demo-story-kit';

export type DemoApproval = {
  key: string;
  body: Omit<ApprovalRequestBody, 'pendingTtlSeconds' | 'grantTtlSeconds'> & {
    pendingTtlSeconds: number;
    grantTtlSeconds: number;
  };
  /** Demo reviewers (by e-mail) who already approved it. */
  approvedBy?: string[];
};

const digest = (s: string) => 'sha256:' + createHash('sha256').update(s).digest('hex');
const HOUR = 3600;

function demo(
  key: string,
  tool: { server: string; name: string; annotations?: ApprovalRequestBody['tool']['annotations'] },
  over: Partial<ApprovalRequestBody> & { summary: string; requestRef: string },
  approvedBy?: string[],
): DemoApproval {
  return {
    key: `demo-approval-${key}`,
    body: {
      organization: 'acme',
      principal: 'user_193',
      agent: 'support-bot',
      server: tool.server,
      tool: { name: tool.name, annotations: tool.annotations },
      argsDigest: digest(over.summary),
      resource: null,
      pendingTtlSeconds: 8 * HOUR,
      grantTtlSeconds: 900,
      ...over,
    },
    approvedBy,
  };
}

export const demoApprovals = (reviewer2: string): DemoApproval[] => [
  demo('address-4490', tools.updateAddress, {
    requestRef: 'req_address_4490',
    summary: 'Change the shipping address of order 4490 to the one the customer confirmed by chat',
    resource: { type: 'order', id: '4490' },
  }),
  demo('address-5121', tools.updateAddress, {
    requestRef: 'req_address_5121',
    principal: 'user_207',
    summary: 'Correct the postcode on order 5121 (customer typo)',
    resource: { type: 'order', id: '5121' },
    pendingTtlSeconds: 6 * HOUR,
  }),
  // Destructive and open-world on a trusted server: two reviewers.
  demo('refund-6120', tools.refund, {
    requestRef: 'req_refund_6120',
    summary: 'Refund 129.00 EUR on order 6120: parcel lost in transit',
    resource: { type: 'order', id: '6120' },
  }),
  // Two approvals, one already given.
  demo(
    'cancel-7002',
    tools.cancelOrder,
    {
      requestRef: 'req_cancel_7002',
      principal: 'user_311',
      summary: 'Cancel order 7002 before it ships: duplicate of order 7001',
      resource: { type: 'order', id: '7002' },
    },
    [reviewer2],
  ),
  // On the first demo reviewer's own principal: only someone else may decide it.
  demo('address-reviewer', tools.updateAddress, {
    requestRef: 'req_address_8810',
    principal: 'user_reviewer',
    summary: 'Update the delivery address of order 8810 (placed by Rui Reviewer)',
    resource: { type: 'order', id: '8810' },
  }),
  // Expires within minutes of the seed.
  demo('address-8120', tools.updateAddress, {
    requestRef: 'req_address_8120',
    summary: 'Redirect order 8120 to a pick-up point before the courier leaves',
    resource: { type: 'order', id: '8120' },
    pendingTtlSeconds: 6 * 60,
  }),
  // An untrusted server: its hints are ignored, so two reviewers.
  demo('crm-note-9100', tools.crmNote, {
    requestRef: 'req_crm_9101',
    principal: 'user_402',
    summary: 'Add a note to customer 9100: prefers contact by phone',
    resource: { type: 'customer', id: '9100' },
    pendingTtlSeconds: 3 * HOUR,
  }),
];
