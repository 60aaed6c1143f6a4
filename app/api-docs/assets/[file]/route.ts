import { swaggerAsset } from '../files';

// swagger-ui's bundle and styles, served by the console itself (its CSP allows scripts from no other
// origin, and the console may run with no network). Public: they are the library's published files.
export async function GET(_request: Request, { params }: { params: Promise<{ file: string }> }) {
  const asset = await swaggerAsset((await params).file);
  if (!asset)
    return new Response('Not found', {
      status: 404,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
    });
  return new Response(new Uint8Array(asset.body), {
    headers: {
      'content-type': asset.type,
      // The page asks for them with the package's version in the address (files.ts).
      'cache-control': 'public, max-age=31536000, immutable',
    },
  });
}
