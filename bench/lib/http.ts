// Timed HTTP requests on loopback, and a console session through the real Auth.js sign-in.
import { Agent, request } from 'node:http';
import { serverTimingMs } from './report';

/** An answer read whole; `ms` is from sending to the last byte. */
export type Answer = { status: number; ms: number; bytes: number; body: string };
export type Timed = Answer & { serverMs: number | null; headers: Headers };

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

// Keep-alive connections for timedHttp: the most recently used first, so a steady rate keeps few
// of them busy and the rest close on the server's keep-alive timeout (5 s) before reuse races it.
const agent = new Agent({ keepAlive: true, maxSockets: 512, scheduling: 'lifo', timeout: 4_000 });

/**
 * One request over node:http on shared keep-alive connections, for load where this process's own
 * CPU would distort the figure: about a fifth of fetch's CPU per request here (WHATWG fetch builds
 * streams, a Request and a Response around every call). The body is read as sent: ask for no
 * content encoding.
 */
export function timedHttp(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const req = request(url, { method: init.method ?? 'GET', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const buf = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, bytes: buf.length, body: buf.toString() });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
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
