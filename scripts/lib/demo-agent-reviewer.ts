// Who decides the agent-integration demo's approval requests: the reviewer token, when given, each
// as the scenario wants (approve, or deny), after reading what will run (the arguments the agent
// sent, as the console shows them to reviewers); without one, a person in the console.
import { callApi, type CountersignEndpoint } from '../../lib/mcp/countersign-http';
import type { ApprovalSnapshot } from '../../lib/mcp';
import type { ReviewerSaw } from './demo-agent-types';

export function demoReviewer(o: {
  reviewer: CountersignEndpoint | null;
  countersignUrl: string;
  log: (line: string) => void;
}) {
  // What the reviewer token decides next.
  let next: 'approve' | 'deny' = 'approve';
  const seen = new Map<string, ReviewerSaw>();
  const onRequested = async (approval: ApprovalSnapshot) => {
    if (!o.reviewer) {
      o.log(
        `    waiting for a person to decide approval ${approval.id} (${approval.requiredApprovals} needed) at ${new URL('/approvals', o.countersignUrl)}`,
      );
      return;
    }
    const read = await callApi(o.reviewer, 'GET', `/api/v1/approvals/${approval.id}`);
    if (read.kind === 'response' && read.status === 200) {
      const body = read.body as Omit<ReviewerSaw, 'toolDescription'> & { tool?: { description?: string | null } };
      seen.set(approval.id, {
        arguments: body.arguments ?? null,
        argumentsNote: body.argumentsNote ?? null,
        toolDescription: body.tool?.description ?? null,
      });
      o.log(
        `    the reviewer reads what will run: ${body.arguments ? JSON.stringify(body.arguments) : `nothing (${body.argumentsNote})`}`,
      );
      if (body.tool?.description) o.log(`    and the tool's description: ${body.tool.description}`);
    }
    const reason =
      next === 'approve'
        ? 'Demo: the order and amount match the ticket'
        : 'Demo: the customer already got a replacement';
    const res = await callApi(o.reviewer, 'POST', `/api/v1/approvals/${approval.id}/decisions`, {
      body: { decision: next, reason, version: approval.version },
    });
    if (res.kind !== 'response' || res.status !== 200)
      o.log(
        `    the reviewer token could not decide ${approval.id}: ${res.kind === 'response' ? `HTTP ${res.status}` : 'unreachable'}`,
      );
    else if ((res.body as { status?: string }).status === 'pending')
      o.log(`    ${next}d by the reviewer token; ${approval.id} still needs another reviewer in the console`);
    else o.log(`    ${next === 'approve' ? 'approved' : 'denied'} by the reviewer token: ${approval.id}`);
  };
  return {
    onRequested,
    /** Until the next call: the reviewer token denies instead of approving. */
    decide: (decision: 'approve' | 'deny') => void (next = decision),
    /** What the reviewer token read of an approval before deciding it. */
    saw: (approvalId: string | null | undefined) => (approvalId ? seen.get(approvalId) : undefined),
  };
}
