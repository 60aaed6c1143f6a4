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
  rate_limited: 429,
  unavailable: 503,
};

export type FieldError = { path: string; message: string };
export type Fail = { ok: false; failure: Failure; detail?: string; errors?: FieldError[] };
export type Ok<T> = { ok: true; value: T };
export type Result<T> = Ok<T> | Fail;

export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });
export const fail = (failure: Failure, detail?: string, errors?: FieldError[]): Fail => ({ ok: false, failure, detail, errors });

/** zod issues as field errors, with dotted paths such as `records.3.eventId`. */
export function fieldErrors(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): FieldError[] {
  return issues.map((i) => ({ path: i.path.map(String).join('.') || '(body)', message: i.message }));
}
