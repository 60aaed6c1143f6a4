// Webhook event types and endpoint input (docs/api.md "Webhooks"). Pure: no I/O.
import { z } from 'zod';

export const webhookEventTypes = [
  'approval.requested',
  'approval.decided',
  'approval.approved',
  'approval.denied',
  'approval.expired',
  'approval.revoked',
  'grant.redeemed',
  // A tool's definition differs from the accepted one (docs/catalog.md "Pinning"): held until an admin accepts it.
  'tool.changed',
  // A guard refused a call before it reached its server (docs/design.md "Guards at the point of execution").
  'call.refused',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

export const webhookFormats = ['slack', 'standard'] as const;
export type WebhookFormat = (typeof webhookFormats)[number];

/**
 * What an event row holds (webhook_enqueue in the migration): identifiers only, the names a
 * message may carry. Never arguments, their digest, free text (summary, reason), or a grant id.
 */
export type WebhookEventData = {
  approvalId: string;
  requestRef: string;
  organization: string;
  principal: string;
  server: string;
  tool: string;
  annotationsTrusted: boolean;
  status: string;
  requiredApprovals: number;
  expiresAt: string;
  /** approval.decided: the one decision and its reviewer. */
  decision?: 'approve' | 'deny';
  reviewer?: string;
  /** approval.decided / approved: approvals counted so far. */
  approvals?: number;
  redeemedAt?: string;
};

/**
 * What a `tool.changed` event holds: the server, the tool, the hash of the definition held and of
 * the one accepted (null for a new tool on a server that holds new tools), and which parts differ.
 * Never the definitions themselves: they are the server's free text.
 */
export type ToolChangedData = {
  server: string;
  tool: string;
  definitionHash: string;
  acceptedHash: string | null;
  differs: string[];
};

/**
 * What a `call.refused` event holds: the guard's category, where, and the refusal's record. Never
 * the summary, arguments or their digest.
 */
export type CallRefusedData = {
  category: string;
  server: string;
  tool: string;
  requestRef: string;
  recordId: string;
};

export type WebhookEvent = {
  id: string;
  type: WebhookEventType;
  createdAt: Date;
  data: WebhookEventData | ToolChangedData | CallRefusedData;
};

export const MAX_URL_LENGTH = 2048;

export const endpointInputSchema = z.object({
  url: z.string().trim().min(1, 'enter the receiver URL').max(MAX_URL_LENGTH, `at most ${MAX_URL_LENGTH} characters`),
  format: z.enum(webhookFormats, { message: 'choose slack or standard' }),
  events: z
    .array(z.enum(webhookEventTypes, { message: `one of ${webhookEventTypes.join(', ')}` }))
    .min(1, 'choose at least one event type')
    .max(webhookEventTypes.length)
    .transform((e) => [...new Set(e)]),
  enabled: z.boolean().default(true),
});
export type EndpointInput = z.input<typeof endpointInputSchema>;

export const endpointUpdateSchema = z.object({
  id: z.uuid({ message: 'not an endpoint id' }),
  enabled: z.boolean().optional(),
  events: endpointInputSchema.shape.events.optional(),
});
