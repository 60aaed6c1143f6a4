// Shared set-up of the outcome records API specs (e2e/outcomes-api-*.spec.ts): keys and a token made
// with the CLI, records, and posting them.
import { test, type APIRequestContext } from '@playwright/test';
import { cli, secretFrom, users } from './e2e';

export let writeKey = '';
export let readKey = '';
export let orgKey = '';
export let supportToken = '';
export const ORG = `org-${Date.now().toString(36)}`;

export const apiKey = (name: string, scopes: string, ...more: string[]) =>
  secretFrom(cli('apikeys:create', '--name', `e2e-${name}-${Date.now()}`, '--scopes', scopes, ...more), 'cs_live_');

export function setUpOutcomesApi() {
  test.beforeAll(() => {
    writeKey = apiKey('outcomes-write', 'outcomes:write');
    readKey = apiKey('outcomes-read', 'outcomes:read');
    orgKey = apiKey('outcomes-org', 'outcomes:write,outcomes:read', '--organization', ORG);
    supportToken = secretFrom(
      cli('tokens:create', '--email', users.support.email, '--name', 'e2e-outcomes'),
      'cs_pat_',
    );
  });
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
export let seq = 0;
export const uniq = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${seq++}`;

export function record(over: Record<string, unknown> = {}) {
  return {
    eventId: uniq('evt'),
    occurredAt: '2026-11-30T12:00:00Z',
    requestRef: uniq('req'),
    organization: 'acme',
    principal: 'user_193',
    server: 'billing-mcp',
    tool: { name: 'refund_payment', annotations: { readOnlyHint: false, destructiveHint: true } },
    argsDigest: `sha256:${'ab'.repeat(32)}`,
    summary: 'Refund 40.00 EUR on order 4411',
    observed: { sent: true, httpStatus: 200, result: { isError: false, outputValidation: 'valid' } },
    ...over,
  };
}

export const post = (request: APIRequestContext, secret: string, data: unknown) =>
  request.post('/api/v1/outcomes', { headers: bearer(secret), data });

export const CLASSIFICATION_KEYS = [
  'boundary',
  'category',
  'delivery',
  'nextStep',
  'readOnly',
  'retry',
  'whatHappened',
];
