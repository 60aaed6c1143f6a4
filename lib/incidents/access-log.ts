// The incident access log's listing query (the admin page's search params). Pure.
import { z } from 'zod';
import { cursorCodec, cursorId, cursorInstant } from '@/lib/pagination/cursor';
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

// Opaque to callers (lib/pagination/cursor.ts), as the other listings' cursors.
const accessCursor = cursorCodec(
  z.tuple([cursorInstant, cursorId]).transform(([at, id]): AccessCursor => ({ at, id })),
  (c) => [c.at.toISOString(), c.id],
);
export const encodeAccessCursor = accessCursor.encode;
export const decodeAccessCursor = accessCursor.decode;

// An empty parameter (a form's blank field) means "no filter".
const param = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const accessLogQuerySchema = z.strictObject({
  /** Exact request reference. */
  requestRef: param(boundedString(255).trim().min(1)),
  /** Part of the actor, any case: an email, or `api_key:<id>`. */
  actor: param(boundedString(255).trim().min(1)),
  cursor: param(accessCursor.param(200, 'is not a cursor this page returned')),
  limit: param(z.coerce.number().int().min(1).max(ACCESS_PAGE_MAX)),
});
export type AccessLogQuery = z.output<typeof accessLogQuerySchema>;
