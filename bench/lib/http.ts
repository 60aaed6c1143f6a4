// Timed HTTP requests on loopback, and a console session through the real Auth.js sign-in.
import { serverTimingMs } from './report';

export type Timed = {
  status: number;
  ms: number;
  serverMs: number | null;
  bytes: number;
  body: string;
  headers: Headers;
};

/** Sends one request and reads the whole body; `ms` is from sending to the last byte. */
export async function timedFetch(url: string, init: RequestInit = {}): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(url, { redirect: 'manual', ...init });
  const body = await res.text();
  const ms = performance.now() - t0;
  return {
    status: res.status,
    ms,
    serverMs: serverTimingMs(res.headers.get('server-timing')),
    bytes: Buffer.byteLength(body),
    body,
    headers: res.headers,
  };
}

// name=value of each Set-Cookie, merged into a jar (later ones win).
function absorb(jar: Map<string, string>, res: Response): void {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
}
const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

/**
 * Signs in as a console user the way a browser form post does (Auth.js credentials provider):
 * GET /api/auth/csrf for the token and its cookie, POST /api/auth/callback/credentials with both,
 * and returns the Cookie header carrying the session. Checked with GET /api/v1/me.
 */
export async function signIn(origin: string, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const csrfRes = await fetch(`${origin}/api/auth/csrf`);
  absorb(jar, csrfRes);
  const { csrfToken } = (await csrfRes.json()) as { csrfToken?: string };
  if (!csrfToken) throw new Error('sign-in: GET /api/auth/csrf returned no csrfToken');

  const res = await fetch(`${origin}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: cookieHeader(jar),
      origin,
      'x-auth-return-redirect': '1',
    },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${origin}/approvals` }).toString(),
  });
  absorb(jar, res);
  await res.arrayBuffer();
  if (![...jar.keys()].some((k) => k.endsWith('authjs.session-token'))) {
    throw new Error(
      `sign-in: POST /api/auth/callback/credentials answered ${res.status} (location ${res.headers.get('location')}) without a session cookie`,
    );
  }
  const cookie = cookieHeader(jar);
  const me = await fetch(`${origin}/api/v1/me`, { headers: { cookie } });
  const who = (await me.json()) as { email?: string };
  if (me.status !== 200 || who.email !== email)
    throw new Error(`sign-in: GET /api/v1/me with the session answered ${me.status}: ${JSON.stringify(who)}`);
  return cookie;
}
