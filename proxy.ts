import { NextResponse, type NextRequest } from 'next/server';
import { contentSecurityPolicy } from '@/lib/content-security-policy.mjs';

const isApi = (request: NextRequest) => request.nextUrl.pathname.startsWith('/api/');

function malformedPath(request: NextRequest): NextResponse {
  const detail = 'The path is not valid percent-encoded UTF-8.';
  if (!isApi(request))
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
  // Next answers a path whose percent-encoding does not decode (`/api/v1/incidents/%ED%A0%80`,
  // `/incidents/%E0%A4%A`) with a bare 500 before any route runs, and logs nothing. Such a path
  // names nothing: 400 here, as problem+json under /api (docs/api.md: malformed requests are 400).
  try {
    decodeURIComponent(request.nextUrl.pathname);
  } catch {
    const res = malformedPath(request);
    res.headers.set('Content-Security-Policy', contentSecurityPolicy());
    return res;
  }
  // An API answer's policy comes from next.config.js, as for the API paths this does not see.
  if (isApi(request)) return NextResponse.next();
  // Next reads the nonce from the request's policy and puts it on its own scripts (pages render
  // per request: app/layout.tsx reads the headers).
  const nonce = Buffer.from(crypto.randomUUID()).toString('base64');
  const csp = contentSecurityPolicy(nonce);
  const headers = new Headers(request.headers);
  headers.set('x-nonce', nonce);
  headers.set('Content-Security-Policy', csp);
  const res = NextResponse.next({ request: { headers } });
  res.headers.set('Content-Security-Policy', csp);
  return res;
}

// Every page (the build's static files need no policy of their own), and of the API only the paths
// with a percent sign, for the check above: every other API answer gets its nonce-less policy from
// next.config.js without running this, which costs a bare answer a third of its CPU.
export const config = { matcher: ['/((?!_next/static|_next/image|favicon.svg|api/).*)', '/api/(.*%.*)'] };
