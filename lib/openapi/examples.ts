// Example request bodies for the API reference (docs/api.md's own examples). A unit test parses each
// with the schema that validates the request, so an example cannot drift from what is accepted.
const digest = `sha256:${'9f'.repeat(32)}`;
// An approval's arguments and their digest (sha256sum of {"amount":"40.00","currency":"EUR","order_id":"4411"}),
// so that the example is one the console takes.
const refundArguments = { order_id: '4411', amount: '40.00', currency: 'EUR' };
const refundDigest = 'sha256:c14a2d971e37fed9301f3b251d14abd8c8c7a2d12ba07c4915dca7c6a62fbb7a';

export const outcomeBatchExample = {
  records: [
    {
      eventId: 'evt_01JD3YV8Q6',
      occurredAt: '2026-11-30T12:00:00Z',
      durationMs: 812,
      requestRef: 'req_8f2c',
      idempotencyKey: 'refund-4411-v1',
      attempt: 1,
      organization: 'acme',
      principal: 'user_193',
      agent: 'support-bot',
      server: 'billing-mcp',
      serverVersion: '2.3.0',
      protocolVersion: '2025-11-25',
      tool: {
        name: 'refund_payment',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      },
      mcpRequestId: 17,
      argsDigest: digest,
      summary: 'Refund 40.00 EUR on order 4411',
      observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } },
    },
  ],
};

export const approvalRequestExample = {
  requestRef: 'req_8f2c',
  organization: 'acme',
  principal: 'user_193',
  agent: 'support-bot',
  server: 'billing-mcp',
  tool: {
    name: 'refund_payment',
    description: 'Refunds a captured payment, in full or in part.',
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  argsDigest: refundDigest,
  arguments: refundArguments,
  summary: 'Refund 40.00 EUR on order 4411',
  resource: { type: 'order', id: '4411' },
  pendingTtlSeconds: 3600,
  grantTtlSeconds: 900,
};

export const decisionExample = { decision: 'approve', reason: 'Customer confirmed by phone', version: 1 };
export const revokeExample = { reason: 'Refund handled manually' };
export const withdrawExample = { reason: 'The client declined the elicitation' };
export const redeemExample = { server: 'billing-mcp', tool: 'refund_payment', argsDigest: refundDigest };
export const trustServerExample = { name: 'billing-mcp' };
export const policyEvaluateExample = {
  server: 'billing-mcp',
  tools: [
    {
      name: 'get_order',
      title: 'Get order',
      description: 'Reads one order by its id. Never changes anything.',
      inputSchema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
      annotations: { readOnlyHint: true },
    },
    { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
  ],
};

export const acceptToolExample = {
  server: 'billing-mcp',
  tool: 'refund_payment',
  definitionHash: 'sha256:9f2c4e1b7a0d3c5e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60',
};

export const otlpJsonExample = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }] },
      scopeSpans: [
        {
          spans: [
            {
              traceId: '5b8efff798038103d269b633813fc60c',
              spanId: 'eee19b7ec3c1b174',
              name: 'tools/call refund_payment',
              kind: 3,
              startTimeUnixNano: '1796040000000000000',
              endTimeUnixNano: '1796040000812000000',
              attributes: [
                { key: 'mcp.method.name', value: { stringValue: 'tools/call' } },
                { key: 'gen_ai.tool.name', value: { stringValue: 'refund_payment' } },
                { key: 'countersign.request_ref', value: { stringValue: 'req_8f2c' } },
                { key: 'countersign.principal', value: { stringValue: 'user_193' } },
                { key: 'countersign.organization', value: { stringValue: 'acme' } },
                { key: 'countersign.server', value: { stringValue: 'billing-mcp' } },
              ],
            },
          ],
        },
      ],
    },
  ],
};

export const stateCheckExample = {
  verdict: 'did_not_happen',
  note: 'No refund for order 4411 in the payment provider.',
};

export const guardCheckExample = {
  eventId: 'evt_01JD3YV9A1',
  requestRef: 'req_8f2c',
  organization: 'acme',
  principal: 'user_193',
  agent: 'support-bot',
  server: 'billing-mcp',
  tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
  argsDigest: digest,
  idempotencyKey: 'refund-4411-v1',
  summary: 'Refund 40.00 EUR on order 4411',
  records: [],
};
