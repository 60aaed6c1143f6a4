// The problem+json answers (docs/api.md, "Errors") each operation can give, derived from the route
// wrapper's rules (lib/server/http/api-route.ts) and the operation's own failures, with their
// status from the one failure table (lib/result.ts). Pure: the document and the e2e check use it.
import { z } from 'zod';
import { httpStatus, type Failure } from '@/lib/result';
import type { Operation } from './types';

/** Failures every route through apiRoute may answer: no credential, not allowed, too many, no database. */
const wrapperFailures: Failure[] = ['unauthenticated', 'forbidden', 'rate_limited', 'unavailable'];
/** With a JSON body: malformed (400), too large (413), schema violations (422). */
const bodyFailures: Failure[] = ['payload_too_large', 'invalid_input'];

/** Status → the `code`s an operation may answer with it. 400 `invalid_input`: a malformed path or body. */
export function problemCodes(op: Operation): Map<number, string[]> {
  const failures = new Set<Failure>(op.failures ?? []);
  const out = new Map<number, Set<string>>();
  const add = (status: number, code: string) => out.set(status, (out.get(status) ?? new Set()).add(code));
  // Every /api path may be refused as malformed before a route runs (proxy.ts: bad percent-encoding).
  add(400, 'invalid_input');
  if (op.action !== null) for (const f of wrapperFailures) failures.add(f);
  if (op.body) for (const f of bodyFailures) failures.add(f);
  if (op.decodedBody) failures.add('payload_too_large');
  if (op.query) failures.add('invalid_input');
  for (const f of failures) add(httpStatus[f], f);
  return new Map([...out].sort(([a], [b]) => a - b).map(([status, codes]) => [status, [...codes].sort()]));
}

export const problemTitles: Record<number, string> = {
  400: 'Malformed request',
  401: 'No valid credential',
  403: 'The credential lacks the scope or role',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Body over 1 MiB',
  422: 'Invalid input, naming each field',
  429: 'Too many requests',
  503: 'Database unavailable; nothing was written',
};

/** Answers that tell when to retry. */
export const retryAfterStatuses = new Set([429, 503]);

export function problemSchema(status: number, codes: readonly string[]) {
  return z
    .strictObject({
      type: z.string().meta({ example: `/problems/${codes[0]}` }),
      title: z.string(),
      status: z.literal(status),
      code: z.enum(codes as [string, ...string[]]).meta({ description: 'Stable: branch on this.' }),
      detail: z.string().meta({ description: 'For people; never stack traces or database text.' }),
      errors: z
        .array(z.strictObject({ path: z.string().meta({ example: 'records.0.eventId' }), message: z.string() }))
        .optional()
        .meta({ description: 'With 422: one entry per invalid field.' }),
    })
    .meta({ description: 'RFC 9457 problem details.' });
}
