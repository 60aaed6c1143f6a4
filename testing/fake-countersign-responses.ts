// The answers of the fake console (fake-countersign.ts): JSON, and problem+json refusals shaped as
// the console's (a code, and for invalid input the path and message of each issue).

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export const problem = (status: number, code: string, errors?: { path: string; message: string }[]) =>
  new Response(
    JSON.stringify({
      type: `/problems/${code}`,
      title: code,
      status,
      detail: code,
      code,
      ...(errors ? { errors } : {}),
    }),
    { status, headers: { 'content-type': 'application/problem+json' } },
  );

/** 422 invalid_input naming each of a zod parse's issues. */
export const invalid = (issues: { path: PropertyKey[]; message: string }[]) =>
  problem(
    422,
    'invalid_input',
    issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  );
