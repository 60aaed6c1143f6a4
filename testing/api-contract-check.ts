// Whether an answer of /api/v1 is as the API reference documents it (lib/openapi/routes.ts, the
// source of GET /api/v1/openapi.json): a documented status, and a body matching the documented
// schema, problems included. Pure: used by the e2e specs (./api-contract.ts) and unit-tested.
import { z } from 'zod';
import { problemCodes, problemSchema } from '@/lib/openapi/problems';
import { apiRoutes, type Method, type Operation } from '@/lib/openapi/routes';

const PREFIX = '/api/v1';

// Static segments before dynamic ones: /approvals/pending-count is not /approvals/{id}.
const matchers = apiRoutes
  .map((r) => ({
    entry: r,
    dynamic: (r.path.match(/\{/g) ?? []).length,
    re: new RegExp(`^${r.path.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.dynamic - b.dynamic);

function operationAt(method: string, pathname: string): Operation | 'unknown path' | 'unknown method' {
  const found = matchers.find((m) => m.re.test(pathname.slice(PREFIX.length)));
  if (!found) return 'unknown path';
  return found.entry.operations[method as Method] ?? 'unknown method';
}

const issues = (error: z.ZodError) => z.prettifyError(error).slice(0, 2000);

/** What is wrong with this answer by the API reference, or null when it matches. */
export function contractViolation(
  method: string,
  url: string,
  status: number,
  contentType: string | undefined,
  text: string,
): string | null {
  const { pathname } = new URL(url);
  if (!pathname.startsWith(`${PREFIX}/`)) return null;
  const op = operationAt(method, pathname);
  const where = `${method} ${pathname} → ${status}`;
  // Not ours: Next answers paths and methods no route has (404, 405) itself, not as problems.
  if (typeof op === 'string') {
    return (status === 404 || status === 405) && !contentType?.includes('problem+json')
      ? null
      : `${where}: ${op}, not in the API reference`;
  }
  const type = (contentType ?? '').split(';')[0].trim();
  if (type === 'application/problem+json') {
    const codes = problemCodes(op).get(status);
    if (!codes) return `${where}: a problem with a status the reference does not list for this operation`;
    const parsed = problemSchema(status, codes).safeParse(JSON.parse(text));
    return parsed.success ? null : `${where}: the problem differs from the reference:\n${issues(parsed.error)}`;
  }
  const answer = op.answers.find((a) => a.status === status);
  if (!answer) return `${where}: a status the reference does not list for this operation`;
  if (answer.alternatives && type in answer.alternatives) return null;
  if (type !== (answer.contentType ?? 'application/json')) return `${where}: content-type ${type} not documented`;
  const parsed = answer.schema.safeParse(JSON.parse(text));
  return parsed.success ? null : `${where}: the body differs from the reference:\n${issues(parsed.error)}`;
}
