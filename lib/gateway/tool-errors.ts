// What the gateway answers when it did not forward a call (docs/gateway.md, "The gateway"): an `isError`
// result with readable text, no structuredContent (the SDK client would check it against the
// tool's outputSchema and throw), and the machine-readable part in `_meta["countersign/error"]`.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export type GatewayErrorCategory =
  'approval_required' | 'denied' | 'approval_expired' | 'unavailable' | 'denied_by_policy' | 'tool_changed';

const RETRY: Record<GatewayErrorCategory, 'after_approval' | 'no' | 'backoff'> = {
  approval_required: 'after_approval',
  denied: 'no',
  approval_expired: 'after_approval',
  unavailable: 'backoff',
  denied_by_policy: 'no',
  // Held: its definition changed since an admin accepted it; callable again once the new one is.
  tool_changed: 'after_approval',
};

export function gatewayError(
  category: GatewayErrorCategory,
  text: string,
  approval?: { id: string; url?: string },
): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: {
      'countersign/error': {
        category,
        retry: RETRY[category],
        ...(approval ? { approvalId: approval.id, ...(approval.url ? { approvalUrl: approval.url } : {}) } : {}),
      },
    },
  };
}
