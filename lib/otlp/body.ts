// An OTLP/HTTP request body, read within a byte limit, gunzipped within the same limit (so a
// small gzip bomb is as refused as a large body), and told apart by Content-Type.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { OtlpEncoding } from './response';

const gunzipAsync = promisify(gunzip);

export type OtlpBody =
  | { ok: true; encoding: OtlpEncoding; bytes: Uint8Array }
  | { ok: false; failure: 'too_large' | 'bad_request'; detail: string };

const tooLarge = (limit: number, what: string): OtlpBody => ({
  ok: false,
  failure: 'too_large',
  detail: `The body may be at most ${limit} bytes${what}.`,
});
const bad = (detail: string): OtlpBody => ({ ok: false, failure: 'bad_request', detail });

/** Which OTLP encoding a Content-Type names; null when neither. */
export function encodingOf(contentType: string | null): OtlpEncoding | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return null;
}

export async function readOtlpBody(request: Request, limit: number): Promise<OtlpBody> {
  const encoding = encodingOf(request.headers.get('content-type'));
  if (!encoding) return bad('Content-Type must be application/x-protobuf or application/json (OTLP/HTTP).');
  const compression = (request.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (compression !== 'gzip' && compression !== 'identity')
    return bad(`Content-Encoding "${compression.slice(0, 40)}" is not supported: send gzip or none.`);
  if (Number(request.headers.get('content-length')) > limit) return tooLarge(limit, '');

  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    // Content-Length may be absent (chunked) or wrong: count while reading.
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        return tooLarge(limit, '');
      }
      chunks.push(value);
    }
  }
  const raw = Buffer.concat(chunks);
  if (compression === 'identity') return { ok: true, encoding, bytes: raw };
  try {
    return { ok: true, encoding, bytes: await gunzipAsync(raw, { maxOutputLength: limit }) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return tooLarge(limit, ' once decompressed');
    return bad('The body is not valid gzip (Content-Encoding: gzip).');
  }
}
