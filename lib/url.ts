type Params = Record<string, string | undefined>;

/** `path` with the given search params, changed by `change`; empty values are left out. */
export function withParams(path: string, values: Params, change: Params = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...values, ...change })) if (v) params.set(k, v);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Next's searchParams, one value each (the first of a repeated parameter). */
export function firstValues(search: Record<string, string | string[] | undefined>): Params {
  return Object.fromEntries(Object.entries(search).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
}
