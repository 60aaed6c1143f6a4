// The framework floor every /api/v1 answer pays, for the benchmarks that compare a route with it:
// GET /api/v1/me with a credential (routing, the key check, the rate limit, JSON out; no data
// work) and the same route with no credential at all (a bare 401: routing and the refusal only).
import { timedFetch, type Answer } from './http';

export type FloorRoute = 'me' | 'bare401';

export const floorLabel: Record<FloorRoute, string> = {
  me: 'GET /api/v1/me (authenticated, no work)',
  bare401: 'GET /api/v1/me, no credential (bare 401)',
};

/**
 * Sends one floor request and checks its answer (200 with the key, 401 without one), through
 * `via`: the same client as the route it is the floor of.
 */
export async function floorRequest(
  origin: string,
  route: FloorRoute,
  apiKey: string,
  via: (url: string, init: { headers?: Record<string, string> }) => Promise<Answer> = timedFetch,
): Promise<Answer> {
  const r = await via(`${origin}/api/v1/me`, route === 'me' ? { headers: { authorization: `Bearer ${apiKey}` } } : {});
  const expected = route === 'me' ? 200 : 401;
  if (r.status !== expected)
    throw new Error(`${floorLabel[route]} answered ${r.status}, expected ${expected}: ${r.body.slice(0, 300)}`);
  return r;
}
