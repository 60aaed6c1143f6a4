// Expected failures are values; bugs throw. One table maps failures to HTTP.

export type Failure =
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'invalid_input'
  | 'gone'
  | 'payload_too_large'
  | 'idempotency_key_required'
  | 'idempotency_key_reused'
  | 'arguments_required'
  | 'arguments_too_large'
  | 'arguments_digest_mismatch'
  | 'rate_limited'
  | 'unavailable';

export const httpStatus: Record<Failure, number> = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  invalid_input: 422,
  payload_too_large: 413,
  idempotency_key_required: 400,
  idempotency_key_reused: 422,
  // An approval request's arguments (docs/api.md "Approvals and grants"): missing, over 64 KiB, or
  // not the ones its argsDigest was computed over.
  arguments_required: 422,
  arguments_too_large: 422,
  arguments_digest_mismatch: 422,
  rate_limited: 429,
  unavailable: 503,
};

export type FieldError = { path: string; message: string };
export type Fail = { ok: false; failure: Failure; detail?: string; errors?: FieldError[] };
export type Ok<T> = { ok: true; value: T };
export type Result<T> = Ok<T> | Fail;

export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });
export const fail = (failure: Failure, detail?: string, errors?: FieldError[]): Fail => ({
  ok: false,
  failure,
  detail,
  errors,
});

type Issue = { path: ReadonlyArray<PropertyKey>; message: string; code?: string; keys?: ReadonlyArray<string> };

// Unknown keys are named one by one, up to a bound: a body of 100,000 unknown keys answers a few
// lines, not megabytes.
const UNKNOWN_KEYS_NAMED = 20;

/**
 * zod issues as field errors, with dotted paths such as `records.3.eventId`. A strict object
 * reports unknown keys as one issue on the object: each key (`records.0.__proto__`) is named.
 */
export function fieldErrors(issues: ReadonlyArray<Issue>): FieldError[] {
  const at = (path: ReadonlyArray<PropertyKey>) => path.map(String).join('.') || '(body)';
  return issues.flatMap((i) => {
    if (i.code !== 'unrecognized_keys' || !i.keys?.length) return [{ path: at(i.path), message: i.message }];
    const named = i.keys
      .slice(0, UNKNOWN_KEYS_NAMED)
      .map((key) => ({ path: at([...i.path, key]), message: 'is not a known field' }));
    const more = i.keys.length - named.length;
    return more > 0 ? [...named, { path: at(i.path), message: `has ${more} more unknown fields` }] : named;
  });
}
