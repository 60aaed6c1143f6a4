import { NextResponse, type NextRequest } from 'next/server';

// Next answers a path whose percent-encoding does not decode (`/api/v1/incidents/%ED%A0%80`,
// `/incidents/%E0%A4%A`) with a bare 500 before any route runs, and logs nothing. Such a path
// names nothing: 400 here, as problem+json under /api (API.md: malformed requests are 400).
export function proxy(request: NextRequest) {
  try {
    decodeURIComponent(request.nextUrl.pathname);
    return NextResponse.next();
  } catch {
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
}

// Only a path with an escape in it can fail to decode.
export const config = { matcher: '/(.*%.*)' };
