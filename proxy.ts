import { NextResponse, type NextRequest } from 'next/server';

/**
 * The Content-Security-Policy of one response: scripts only with this request's nonce (and what
 * they load, 'strict-dynamic'); no 'unsafe-inline' for scripts, so markup that reached a page
 * through some record's text could not run even if escaping failed somewhere.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function malformedPath(request: NextRequest): NextResponse {
  const detail = 'The path is not valid percent-encoded UTF-8.';
  if (!request.nextUrl.pathname.startsWith('/api/'))
    return new NextResponse(detail, { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  const body = {
    type: '/problems/invalid_input',
    title: 'Malformed request',
    status: 400,
    code: 'invalid_input',
    detail,
  };
  return NextResponse.json(body, {
    status: 400,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
  });
}

export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.randomUUID()).toString('base64');
  const csp = contentSecurityPolicy(nonce);
  // Next answers a path whose percent-encoding does not decode (`/api/v1/incidents/%ED%A0%80`,
  // `/incidents/%E0%A4%A`) with a bare 500 before any route runs, and logs nothing. Such a path
  // names nothing: 400 here, as problem+json under /api (API.md: malformed requests are 400).
  try {
    decodeURIComponent(request.nextUrl.pathname);
  } catch {
    const res = malformedPath(request);
    res.headers.set('Content-Security-Policy', csp);
    return res;
  }
  // Next reads the nonce from the request's policy and puts it on its own scripts (pages render
  // per request: app/layout.tsx reads the headers).
  const headers = new Headers(request.headers);
  headers.set('x-nonce', nonce);
  headers.set('Content-Security-Policy', csp);
  const res = NextResponse.next({ request: { headers } });
  res.headers.set('Content-Security-Policy', csp);
  return res;
}

// Everything but the build's static files (no policy needed on a script file itself).
export const config = { matcher: ['/((?!_next/static|_next/image|favicon.svg).*)'] };
