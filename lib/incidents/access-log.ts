// The incident access log's listing query (the admin page's search params). Pure.
import { z } from 'zod';
import { boundedString } from '@/lib/outcomes/schemas';

export const accessFormats = ['page', 'json', 'markdown'] as const;
export type IncidentAccessFormat = (typeof accessFormats)[number];

/** How the reader came in: the console's session, a personal token, or a machine's API key. */
export const actorKinds = ['session', 'personal_token', 'api_key'] as const;
export type AccessActorKind = (typeof actorKinds)[number];

export const actorKindLabel: Record<AccessActorKind, string> = {
  session: 'Console',
  personal_token: 'Personal token',
  api_key: 'API key',
};

export const formatLabel: Record<IncidentAccessFormat, string> = {
  page: 'Page view',
  json: 'JSON',
  markdown: 'Markdown',
};

export const ACCESS_PAGE_DEFAULT = 50;
export const ACCESS_PAGE_MAX = 200;

/** Where the previous page stopped: newest first, by at, then id. */
export type AccessCursor = { at: Date; id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Opaque to callers (base64url JSON), as the other listings' cursors.
export function encodeAccessCursor(c: AccessCursor): string {
  return btoa(JSON.stringify([c.at.toISOString(), c.id]))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export function decodeAccessCursor(raw: string): AccessCursor | null {
  try {
    const b64 = raw.replace(/-/g, '+').replace(/_/g, '/');
    const parsed: unknown = JSON.parse(atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4)));
    if (!Array.isArray(parsed) || parsed.length !== 2) return null;
    const [at, id] = parsed as unknown[];
    if (typeof at !== 'string' || typeof id !== 'string' || !UUID.test(id)) return null;
    const date = new Date(at);
    return !Number.isNaN(date.getTime()) && date.toISOString() === at ? { at: date, id } : null;
  } catch {
    return null;
  }
}

// An empty parameter (a form's blank field) means "no filter".
const param = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const accessLogQuerySchema = z.strictObject({
  /** Exact request reference. */
  requestRef: param(boundedString(255).trim().min(1)),
  /** Part of the actor, any case: an email, or `api_key:<id>`. */
  actor: param(boundedString(255).trim().min(1)),
  cursor: param(
    z
      .string()
      .max(200)
      .transform((raw, ctx) => {
        const cursor = decodeAccessCursor(raw);
        if (!cursor) ctx.addIssue({ code: 'custom', message: 'is not a cursor this page returned' });
        return cursor ?? z.NEVER;
      }),
  ),
  limit: param(z.coerce.number().int().min(1).max(ACCESS_PAGE_MAX)),
});
export type AccessLogQuery = z.output<typeof accessLogQuerySchema>;
