// Every answer the API e2e specs get is checked against the API reference (GET /api/v1/openapi.json):
// its status must be documented for that operation, and its body must match the documented schema
// (the zod schemas the document is generated from, lib/openapi/routes.ts), problems included.
// Specs import `test` from here: its `request` fixture checks each answer as it arrives.
import { expect, test as base, type APIRequestContext, type APIResponse } from '@playwright/test';
import { contractViolation } from './api-contract-check';

/** Fails the test at once when the answer differs from the reference. */
export async function expectAsDocumented(method: string, res: APIResponse): Promise<void> {
  const text = method === 'HEAD' ? '' : await res.text();
  const violation = contractViolation(method, res.url(), res.status(), res.headers()['content-type'], text);
  expect(violation, 'the answer matches the API reference (GET /api/v1/openapi.json)').toBeNull();
}

const verbs: Record<string, string> = { get: 'GET', post: 'POST', put: 'PUT', patch: 'PATCH', delete: 'DELETE' };

/** The same request context, every answer checked against the reference. */
export function checkedContext(context: APIRequestContext): APIRequestContext {
  return new Proxy(context, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const verb = typeof prop === 'string' ? (prop === 'fetch' ? 'fetch' : verbs[prop]) : undefined;
      if (!verb) return value.bind(target);
      return async (url: string, options?: { method?: string }) => {
        const res: APIResponse = await value.call(target, url, options);
        await expectAsDocumented(verb === 'fetch' ? (options?.method ?? 'GET').toUpperCase() : verb, res);
        return res;
      };
    },
  });
}

export const test = base.extend({
  request: async ({ request }, provide) => {
    await provide(checkedContext(request));
  },
});
export { expect };
