// How approvals read to people: status labels, tones and the risk a request carries. Pure.
import { believedHints } from './policy';
import type { ApprovalStatus } from './schemas';
import type { ApprovalView, DecisionView } from './view';
import type { ToolAnnotations } from '@/lib/outcomes/schemas';
import type { Tone } from '@/lib/outcomes/present';

export type { Tone } from '@/lib/outcomes/present';

export const statusLabel: Record<ApprovalStatus, string> = {
  pending: 'Pending',
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired',
  revoked: 'Revoked',
  redeemed: 'Redeemed',
};

export const statusTone: Record<ApprovalStatus, Tone> = {
  pending: 'info',
  approved: 'good',
  denied: 'bad',
  expired: 'neutral',
  revoked: 'bad',
  redeemed: 'neutral',
};

/** Risk as policy sees it: hints only count from trusted servers (MCP defaults otherwise). */
export function riskOf(annotations: ToolAnnotations | null | undefined, trusted: boolean) {
  const h = believedHints(annotations, trusted);
  const level: 'high' | 'medium' | 'low' = h.readOnly ? 'low' : h.destructive && h.openWorld ? 'high' : 'medium';
  const traits = [
    h.readOnly ? 'read-only' : 'writes',
    ...(h.readOnly ? [] : [h.destructive ? 'destructive' : 'not destructive']),
    h.openWorld ? 'open-world' : 'closed-world',
    ...(trusted ? [] : ['untrusted server: hints ignored']),
  ];
  return { level, traits };
}

/** "in 12 min", "in 2 h 5 min", "3 min ago": short, for queues that refresh. */
export function relativeTime(target: Date | string, now: number): string {
  const diff = new Date(target).getTime() - now;
  const minutes = Math.floor(Math.abs(diff) / 60_000);
  const text =
    minutes < 1
      ? 'under a minute'
      : minutes < 60
        ? `${minutes} min`
        : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return diff >= 0 ? `in ${text}` : `${text} ago`;
}

/** When a request in the history was settled: its decision, revocation or expiry; null while pending. */
export function settledAt(a: Pick<ApprovalView, 'status' | 'decidedAt' | 'revoked' | 'expiresAt'>): Date | null {
  if (a.status === 'pending') return null;
  if (a.revoked) return a.revoked.at;
  if (a.decidedAt) return a.decidedAt;
  return a.status === 'expired' ? a.expiresAt : null;
}

const names = (ds: DecisionView[]) => ds.map((d) => d.reviewer).join(' and ');

/**
 * Why a decision did not go through, for the person who tried: plain words, who did what and when
 * (times as `when` formats them), never versions. `current` is the request as it is now.
 */
export function explainLostDecision(current: ApprovalView, me: string, when: (d: Date) => string): string {
  const mine = current.decisions.find((d) => d.reviewer === me);
  if (mine)
    return `You already ${mine.decision === 'approve' ? 'approved' : 'denied'} this request at ${when(mine.at)}.`;
  const approvals = current.decisions.filter((d) => d.decision === 'approve');
  switch (current.status) {
    case 'approved':
    case 'redeemed':
      return `Someone else decided this request while you were reading it: ${names(approvals)} approved it${current.decidedAt ? ` at ${when(current.decidedAt)}` : ''}. Your decision was not recorded.`;
    case 'denied': {
      const denial = current.decisions.find((d) => d.decision === 'deny');
      return denial
        ? `Someone else decided this request while you were reading it: ${denial.reviewer} denied it at ${when(denial.at)} (“${denial.reason}”). Your decision was not recorded.`
        : 'Someone else denied this request while you were reading it. Your decision was not recorded.';
    }
    case 'expired':
      return `This request expired at ${when(current.expiresAt)}, before your decision arrived. Nothing was recorded.`;
    case 'revoked':
      return `${current.revoked?.by ?? 'An admin'} revoked this request${current.revoked ? ` at ${when(current.revoked.at)}` : ''} while you were reading it. Nothing was recorded.`;
    case 'pending':
      return approvals.length
        ? `While you were reading, ${names(approvals)} approved this request (${approvals.length} of ${current.requiredApprovals} approvals now). Your reason is kept: check the request and decide again.`
        : 'This request changed while you were reading it. Your reason is kept: check the request and decide again.';
  }
}
