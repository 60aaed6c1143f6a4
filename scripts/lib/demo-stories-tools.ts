// Demo stories (scripts/demo-outcomes.ts) that go wrong in or around the tool: arguments, elicitation,
// cancellation, tool errors, schema violations, blocked and silent calls, untrusted and read-only tools.
import { tools, ok, toolError, rpc, http, type Story } from './demo-story-kit';

export const toolStories: Story[] = [
  {
    ref: 'req_args_2231',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      {
        tool: tools.updateAddress,
        observed: rpc(-32602),
        summary: 'Update shipping address on order 2231 (postcode missing)',
      },
      {
        tool: tools.updateAddress,
        observed: {
          sent: true,
          httpStatus: 200,
          jsonRpcErrorCode: -32602,
          result: { isError: true, errorCategory: 'unknown_tool' },
        },
        summary: 'Call update_address (no such tool)',
        afterMs: 2_000,
      },
      {
        tool: tools.updateAddress,
        observed: rpc(-32603),
        summary: 'Update shipping address on order 2231',
        key: 'addr-2231-v2',
        afterMs: 4_000,
      },
    ],
  },
  {
    ref: 'req_elicit_4020',
    agent: 'billing-agent',
    principal: 'user_311',
    organization: 'globex',
    steps: [
      {
        tool: tools.refund,
        observed: rpc(-32042),
        summary: 'Refund 80.00 USD on order 4020: customer must confirm in the browser',
      },
    ],
  },
  {
    ref: 'req_cancel_3390',
    agent: 'fulfilment-agent',
    principal: 'user_515',
    organization: 'acme',
    steps: [
      {
        tool: tools.cancelOrder,
        observed: { sent: true, clientError: 'cancelled' },
        summary: 'Cancel order 3390',
        key: 'cancel-3390',
      },
    ],
  },
  {
    ref: 'req_toolerrors_5555',
    agent: 'support-bot',
    principal: 'user_402',
    organization: 'acme',
    steps: [
      {
        tool: tools.updateAddress,
        observed: toolError('VALIDATION_ERROR'),
        summary: 'Update shipping address on order 5555 to an invalid postcode',
      },
      {
        tool: tools.updateAddress,
        observed: toolError('VALIDATION_ERROR'),
        summary: 'Update shipping address on order 5555 to an invalid postcode',
        afterMs: 500,
      },
      {
        tool: tools.refund,
        observed: toolError('PERMISSION_DENIED'),
        summary: 'Refund 999.00 EUR on order 5555',
        afterMs: 2_000,
      },
      {
        tool: tools.refund,
        observed: toolError('DENIED'),
        summary: 'Refund 999.00 EUR on order 5555 (policy)',
        afterMs: 2_000,
      },
      { tool: tools.getOrder, observed: toolError('NOT_FOUND'), summary: 'Read order 55555', afterMs: 1_000 },
      {
        tool: tools.updateAddress,
        observed: toolError('REVISION_CONFLICT'),
        summary: 'Update shipping address on order 5555 (stale revision)',
        key: 'addr-5555-r7',
        afterMs: 1_000,
      },
      {
        tool: tools.listRefunds,
        observed: toolError('RETRYABLE_UPSTREAM'),
        summary: 'List refunds for order 5555',
        afterMs: 1_000,
      },
      {
        tool: tools.listRefunds,
        observed: toolError('rate-limited'),
        summary: 'List refunds for order 5555',
        afterMs: 1_000,
      },
      {
        tool: tools.cancelOrder,
        observed: toolError(),
        summary: 'Cancel order 5555',
        key: 'cancel-5555',
        afterMs: 1_000,
      },
      {
        tool: tools.getOrder,
        observed: toolError(),
        summary: 'Read order 5555 (tool error without category)',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_schema_6001',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      {
        tool: tools.getOrder,
        observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'invalid' } },
        summary: 'Read order 6001 (result does not match the output schema)',
      },
      {
        tool: tools.getOrder,
        observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'missing' } },
        summary: 'Read order 6001 (no structured content)',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_blocked_7002',
    agent: 'billing-agent',
    principal: 'user_311',
    organization: 'globex',
    steps: [
      {
        tool: tools.refund,
        observed: { sent: false, clientBlock: 'approval_required' },
        summary: 'Refund 60.00 USD on order 7002: waiting for approval',
      },
      {
        tool: tools.cancelOrder,
        observed: { sent: false, clientBlock: 'denied_by_policy' },
        summary: 'Cancel order 7002: blocked by policy',
        afterMs: 1_000,
      },
      {
        tool: tools.listRefunds,
        observed: { sent: false, clientBlock: 'no_credentials' },
        summary: 'List refunds for order 7002: no delegated credential',
        afterMs: 1_000,
      },
    ],
  },
  {
    ref: 'req_silent_8003',
    agent: 'fulfilment-agent',
    principal: 'user_515',
    organization: 'acme',
    steps: [{ tool: tools.cancelOrder, observed: { sent: true }, summary: 'Cancel order 8003', key: 'cancel-8003' }],
  },
  {
    ref: 'req_crm_9100',
    agent: 'support-bot',
    principal: 'user_207',
    organization: 'acme',
    steps: [
      { tool: tools.crmLookup, observed: ok, summary: 'Look up customer jane.doe@example.com in the CRM' },
      {
        tool: tools.crmNote,
        observed: ok,
        summary: 'Add a note to customer 9100: call back on +44 20 7946 0958',
        afterMs: 3_000,
      },
    ],
  },
  {
    ref: 'req_readonly_9200',
    agent: 'support-bot',
    principal: 'user_207',
    organization: 'acme',
    steps: [
      { tool: tools.getOrder, observed: http(500), summary: 'Read order 9200' },
      { tool: tools.getOrder, observed: rpc(-32603), summary: 'Read order 9200', afterMs: 2_000 },
      { tool: tools.getOrder, observed: ok, summary: 'Read order 9200', afterMs: 6_000 },
    ],
  },
];
