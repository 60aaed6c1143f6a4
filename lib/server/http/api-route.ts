import 'server-only';
import type { z } from 'zod';
import { liveSession, readSessionCookie } from '../auth/session';
import { authenticateBearer } from '../credentials/credentials';
import { isDatabaseUnavailable } from '../db/unavailable';
import { noteOwnWrite, readsOnPrimary } from '../db/replica';
import { takeRequestShared } from '../rate-limit/rate-limit';
import { authorize, scopesGranting, type Action } from '@/lib/auth/permissions';
import type { RemoteActor } from '@/lib/auth/actor';
import { fieldErrors, httpStatus, type Failure, type FieldError, type Result } from '@/lib/result';

export const MAX_BODY_BYTES = 1024 * 1024;

const titles: Record<Failure, string> = {
  unauthenticated: 'Authentication required',
  forbidden: 'Not allowed',
  not_found: 'Not found',
  conflict: 'Conflict',
  gone: 'Gone',
  invalid_input: 'Invalid input',
  payload_too_large: 'Request body too large',
  idempotency_key_required: 'Idempotency-Key header required',
  idempotency_key_reused: 'Idempotency key reused with different content',
  arguments_required: 'Arguments required',
  arguments_too_large: 'Arguments too large',
  arguments_digest_mismatch: 'Arguments do not match argsDigest',
  rate_limited: 'Too many requests',
  unavailable: 'Service unavailable',
};

// Next gzips every route handler's answer (it drops a declared Content-Length, so its compressor's
// own 1 KiB threshold never applies). A gzip stream has a fixed cost that outweighs the bytes it
// saves on small answers (redemptions and incident reads: bench:approvals and bench:scale). Answers
// under 16 KiB say no-transform and go as they are; larger ones (pages of records) are still compressed.
const COMPRESS_FROM = 16 * 1024;
export const cacheControl = (body: string) => (body.length < COMPRESS_FROM ? 'no-store, no-transform' : 'no-store');

export function problem(
  failure: Failure | 'bad_request' | 'internal',
  detail?: string,
  errors?: FieldError[],
  headers: Record<string, string> = {},
): Response {
  const status = failure === 'bad_request' ? 400 : failure === 'internal' ? 500 : httpStatus[failure];
  const title =
    failure === 'bad_request' ? 'Malformed request' : failure === 'internal' ? 'Internal error' : titles[failure];
  const code = failure === 'bad_request' ? 'invalid_input' : failure;
  const body = JSON.stringify({
    type: `/problems/${code}`,
    title,
    status,
    code,
    detail: detail ?? title,
    ...(errors ? { errors } : {}),
  });
  return new Response(body, {
    status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': cacheControl(body), ...headers },
  });
}

export function json(value: unknown, status = 200): Response {
  const body = JSON.stringify(value);
  return new Response(body, {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': cacheControl(body) },
  });
}

type RouteOptions<S extends z.ZodType | undefined, Q extends z.ZodType | undefined = undefined> = {
  /** What the caller (API key, personal token or console session) must be allowed to do: authorize() decides. */
  action: Action;
  body?: S;
  /** Validates the query string: each parameter a string, a repeated one an array of them. */
  query?: Q;
  /** The largest body taken, in bytes: MAX_BODY_BYTES unless the route says otherwise. */
  maxBodyBytes?: number;
};

type Handler<S extends z.ZodType | undefined, P, Q extends z.ZodType | undefined = undefined> = (ctx: {
  actor: RemoteActor;
  body: S extends z.ZodType ? z.infer<S> : undefined;
  query: Q extends z.ZodType ? z.infer<Q> : undefined;
  params: P;
  request: Request;
}) => Promise<Result<unknown> | Response>;

const unsafeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Origin must name the host this request was sent to (as the browser saw it, through any proxy). */
function sameOrigin(request: Request): boolean {
  const origin = request.headers.get('origin');
  const host = request.headers.get('x-forwarded-host') ?? request.headers.get('host');
  if (!origin || origin === 'null' || !host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

async function authenticate(request: Request): Promise<RemoteActor | Response | null> {
  const header = request.headers.get('authorization');
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match ? authenticateBearer(match[1]) : null;
  }
  const cookie = await readSessionCookie();
  if (!cookie) return null;
  // Route handlers get no CSRF protection from Next or Auth.js: a cookie-authenticated
  // state change must come from our own origin.
  if (unsafeMethods.has(request.method) && !sameOrigin(request)) {
    return problem(
      'forbidden',
      'State-changing requests with a session cookie must come from the console itself (Origin check).',
    );
  }
  const live = await liveSession(cookie);
  return live ? { ...live.viewer, kind: 'user', tokenId: null } : null;
}

/** Per API key, or per person (personal tokens and the console session share one budget). */
async function rateLimited(actor: RemoteActor): Promise<Response | null> {
  const take = await takeRequestShared(
    actor.kind === 'apiKey' ? { kind: 'apiKey', keyId: actor.keyId } : { kind: 'user', userId: actor.userId },
  );
  if (take.allowed) return null;
  const who = actor.kind === 'apiKey' ? 'this API key' : 'you';
  return problem('rate_limited', `Too many requests from ${who}; retry after ${take.retryAfterSeconds} s.`, undefined, {
    'retry-after': String(take.retryAfterSeconds),
  });
}

async function readBody(request: Request, max = MAX_BODY_BYTES): Promise<{ text: string } | Response> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > max) return problem('payload_too_large', `The body may be at most ${max} bytes.`);
  if (!request.body) return { text: '' };
  // Content-Length may be absent (chunked) or wrong: count while reading.
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return problem('payload_too_large', `The body may be at most ${max} bytes.`);
    }
    chunks.push(value);
  }
  // Bytes that are not UTF-8 make a malformed body, not text silently changed to U+FFFD.
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks)) };
  } catch {
    return problem('bad_request', 'The body is not valid UTF-8.');
  }
}

// No prototype: a parameter named `__proto__` stays a parameter (and is refused as unknown).
function queryObject(request: Request): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URL(request.url).searchParams) {
    const seen = Object.hasOwn(out, key) ? out[key] : undefined;
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

// A strict schema reports unknown parameters as one issue on the whole object: name each one.
function queryErrors(issues: ReadonlyArray<z.core.$ZodIssue>): FieldError[] {
  return fieldErrors(
    issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((key) => ({ path: [...i.path, key], message: 'is not a known parameter' }))
        : [i],
    ),
  );
}

/** The one wrapper every /api/v1 route goes through: credential, permission, query, body, failures. */
export function apiRoute<
  S extends z.ZodType | undefined = undefined,
  P = Record<string, string>,
  Q extends z.ZodType | undefined = undefined,
>(options: RouteOptions<S, Q>, handler: Handler<S, P, Q>) {
  return async (request: Request, context: { params: Promise<P> }): Promise<Response> => {
    try {
      const actor = await authenticate(request);
      if (actor instanceof Response) return actor;
      if (!actor)
        return problem(
          'unauthenticated',
          'Send a valid API key or personal token as "Authorization: Bearer …".',
          undefined,
          { 'www-authenticate': 'Bearer' },
        );
      const limited = await rateLimited(actor);
      if (limited) return limited;
      const isKey = actor.kind === 'apiKey'; // before authorize(), which narrows `actor` when it refuses
      if (!authorize(actor, options.action)) {
        const need = isKey
          ? `one of the scopes ${scopesGranting(options.action).join(', ') || '(people only)'}`
          : 'a role that may do this';
        return problem('forbidden', `This credential lacks ${need}.`);
      }

      let query: unknown = undefined;
      if (options.query) {
        const result = options.query.safeParse(queryObject(request));
        if (!result.success)
          return problem('invalid_input', 'Some query parameters are invalid.', queryErrors(result.error.issues));
        query = result.data;
      }

      let body: unknown = undefined;
      if (options.body) {
        const read = await readBody(request, options.maxBodyBytes);
        if (read instanceof Response) return read;
        let parsed: unknown;
        try {
          parsed = JSON.parse(read.text);
        } catch {
          return problem('bad_request', 'The body is not valid JSON.');
        }
        const result = options.body.safeParse(parsed);
        if (!result.success)
          return problem('invalid_input', 'Some fields are invalid.', fieldErrors(result.error.issues));
        body = result.data;
      }

      const params = await context.params;
      const run = () => handler({ actor, body: body as never, query: query as never, params, request });
      // The console's session reads from the replica where it may (its writes mark the cookie
      // that keeps its next reads on the primary); a bearer credential has no such cookie, so its
      // reads stay on the primary and always follow its own writes.
      const bearer = request.headers.has('authorization');
      const out = bearer ? await readsOnPrimary(run) : await run();
      if (!bearer && unsafeMethods.has(request.method) && out.ok) await noteOwnWrite();
      if (out instanceof Response) return out;
      return out.ok ? json(out.value) : problem(out.failure, out.detail, out.errors);
    } catch (err) {
      if (isDatabaseUnavailable(err))
        return problem('unavailable', 'The database is unavailable; retry shortly.', undefined, { 'retry-after': '5' });
      console.error('[api] unexpected error', request.method, new URL(request.url).pathname, err);
      return problem('internal', 'Something went wrong on our side; it has been logged.');
    }
  };
}
