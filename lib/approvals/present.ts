// How approvals read to people: status labels, tones and the risk a request carries. Pure.
import { believedHints } from './policy';
import type { ApprovalStatus } from './schemas';
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
