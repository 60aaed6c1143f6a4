// Demo stories (scripts/demo-outcomes.ts) of classifier version 2: calls that ran as MCP tasks
// (each status seen is its own record, linked by the task id) and the folded -32602 on a write.
import type { Observed } from '@/lib/outcomes/schemas';
import { ok, write, type Story } from './demo-story-kit';

const reconcile = write('billing-mcp', 'reconcile_ledger', false);
const bulkPrices = write('orders-mcp', 'bulk_update_prices');
const exportInvoices = write('billing-mcp', 'export_invoices', false);
const refund = write('billing-mcp', 'refund_payment');

// demo-outcomes.ts suffixes task ids per repeat, so repeats are other tasks.
const task = (id: string, status: NonNullable<Observed['task']>['status'], more: Partial<Observed> = {}): Observed => ({
  sent: true,
  httpStatus: 200,
  task: { id, status },
  ...more,
});

export const taskStories: Story[] = [
  {
    // Completed: created, polled, its result read and valid.
    ref: 'req_task_ledger_5120',
    agent: 'finance-bot',
    principal: 'user_311',
    organization: 'acme',
    steps: [
      {
        tool: reconcile,
        observed: task('tsk_demo_ledger_5120', 'working'),
        summary: 'Reconcile the November ledger',
        key: 'ledger-2026-11',
      },
      {
        tool: reconcile,
        observed: { ...ok, task: { id: 'tsk_demo_ledger_5120', status: 'completed' } },
        summary: 'Reconcile the November ledger',
        key: 'ledger-2026-11',
        afterMs: 45_000,
      },
    ],
  },
  {
    // Still running: created, then waiting for a person's input; nobody has answered yet.
    ref: 'req_task_prices_5133',
    agent: 'catalog-bot',
    principal: 'user_207',
    organization: 'acme',
    steps: [
      {
        tool: bulkPrices,
        observed: task('tsk_demo_prices_5133', 'working'),
        summary: 'Raise winter prices by 3 %',
        key: 'prices-winter',
      },
      {
        tool: bulkPrices,
        observed: task('tsk_demo_prices_5133', 'input_required'),
        summary: 'Raise winter prices by 3 %',
        key: 'prices-winter',
        afterMs: 12_000,
      },
    ],
  },
  {
    // Expired: the TTL passed while it was working; tasks/get no longer finds it.
    ref: 'req_task_export_5140',
    agent: 'finance-bot',
    principal: 'user_311',
    organization: 'acme',
    steps: [
      {
        tool: exportInvoices,
        observed: task('tsk_demo_export_5140', 'working'),
        summary: 'Export Q3 invoices',
        key: 'export-q3',
      },
      {
        tool: exportInvoices,
        observed: {
          sent: true,
          httpStatus: 200,
          task: { id: 'tsk_demo_export_5140', status: 'working', expired: true },
        },
        summary: 'Export Q3 invoices',
        key: 'export-q3',
        afterMs: 300_000,
      },
    ],
  },
  {
    // Cancelled while working: it may have done part of the work.
    ref: 'req_task_export_5141',
    agent: 'finance-bot',
    principal: 'user_311',
    organization: 'acme',
    steps: [
      {
        tool: exportInvoices,
        observed: task('tsk_demo_export_5141', 'working'),
        summary: 'Export Q2 invoices',
        key: 'export-q2',
      },
      {
        tool: exportInvoices,
        observed: task('tsk_demo_export_5141', 'cancelled'),
        summary: 'Export Q2 invoices',
        key: 'export-q2',
        afterMs: 30_000,
      },
    ],
  },
  {
    // The SDK folded -32602 into an isError result on a write: bad input, or its own output check
    // after the refund ran? Unknown: check state first.
    ref: 'req_refund_4520',
    agent: 'support-bot',
    principal: 'user_193',
    organization: 'acme',
    steps: [
      {
        tool: refund,
        observed: { sent: true, httpStatus: 200, jsonRpcErrorCode: -32602, result: { isError: true } },
        summary: 'Refund 18.00 EUR on order 4520',
        key: 'refund-4520-v1',
      },
    ],
  },
];
