// The one cursor codec of the listings (outcomes, approvals, the incident access log). Pure.
// A cursor is opaque to callers, so an ordering can change without breaking them: base64url of a
// JSON array of the values where the previous page stopped, read back through a zod schema per
// cursor shape. Anything else (not base64url, not JSON, another shape, a tampered value) is no
// cursor at all.
import { z } from 'zod';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An instant as a cursor holds it: exactly the text `toISOString` gives, read back as a Date. */
export const cursorInstant = z
  .string()
  .refine((s) => {
    const d = new Date(s);
    return !Number.isNaN(d.getTime()) && d.toISOString() === s;
  })
  .transform((s) => new Date(s));

/** A row id as a cursor holds it. */
export const cursorId = z.string().regex(UUID);

export type CursorCodec<C> = {
  encode(cursor: C): string;
  /** The cursor, or null when `raw` is not one this codec wrote. */
  decode(raw: string): C | null;
  /** The query parameter: text of at most `maxLength` characters that decodes, else an issue saying `message`. */
  param(maxLength: number, message?: string): z.ZodType<C, string>;
};

const toBase64Url = (s: string) => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

function fromBase64Url(raw: string): string {
  const b64 = raw.replace(/-/g, '+').replace(/_/g, '/');
  return atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
}

/**
 * A codec for one cursor shape: `shape` reads the decoded JSON array into the cursor, `values`
 * writes a cursor as that array.
 */
export function cursorCodec<C>(
  shape: z.ZodType<C>,
  values: (cursor: C) => readonly (string | number)[],
): CursorCodec<C> {
  const decode = (raw: string): C | null => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fromBase64Url(raw));
    } catch {
      return null;
    }
    const read = shape.safeParse(parsed);
    return read.success ? read.data : null;
  };
  return {
    encode: (cursor) => toBase64Url(JSON.stringify(values(cursor))),
    decode,
    param: (maxLength, message = 'is not a cursor this API returned') =>
      z
        .string()
        .max(maxLength)
        .transform((raw, ctx) => {
          const cursor = decode(raw);
          if (cursor === null) ctx.addIssue({ code: 'custom', message });
          return cursor ?? z.NEVER;
        }),
  };
}
