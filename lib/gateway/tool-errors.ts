// What the gateway answers when it did not forward a call (docs/gateway.md, "The gateway"): an `isError`
// result with readable text, no structuredContent (the SDK client would check it against the
// tool's outputSchema and throw), and the machine-readable part in `_meta["countersign/error"]`.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { GuardCategory, Retry } from '../outcomes/schemas';
import { GUARD_RETRY } from '../outcomes/classify';

export type GatewayErrorCategory =
  | 'approval_required'
  | 'denied'
  | 'approval_expired'
  | 'unavailable'
  | 'denied_by_policy'
  | 'tool_changed'
  | GuardCategory;

const RETRY: Record<GatewayErrorCategory, Retry> = {
  approval_required: 'after_approval',
  denied: 'no',
  approval_expired: 'after_approval',
  unavailable: 'backoff',
  denied_by_policy: 'no',
  // Held: its definition changed since an admin accepted it; callable again once the new one is.
  tool_changed: 'after_approval',
  // A guard's answer carries its advice; these (the records') only when it does not.
  ...GUARD_RETRY,
};

/** What `_meta["countersign/error"]` says besides the category. */
export interface GatewayErrorDetail {
  approval?: { id: string; url?: string };
  /** The guard's advice, when it differs from the category's own (not_retryable). */
  retry?: Retry;
  /** The earlier record a guard's refusal points to. */
  recordId?: string;
  retryAfterMs?: number;
}

export function gatewayError(
  category: GatewayErrorCategory,
  text: string,
  { approval, retry, recordId, retryAfterMs }: GatewayErrorDetail = {},
): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: {
      'countersign/error': {
        category,
        retry: retry ?? RETRY[category],
        ...(approval ? { approvalId: approval.id, ...(approval.url ? { approvalUrl: approval.url } : {}) } : {}),
        ...(recordId ? { recordId } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      },
    },
  };
}
