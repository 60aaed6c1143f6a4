// The shape of the route registry (./routes.ts) the API reference is generated from.
import type { z } from 'zod';
import type { Action } from '@/lib/auth/permissions';
import type { Failure } from '@/lib/result';

export const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type Method = (typeof methods)[number];

export type Answer = {
  status: number;
  description: string;
  /** The JSON body (application/json unless `contentType` says otherwise). */
  schema: z.ZodType;
  contentType?: string;
  /** Other encodings of the same answer (e.g. text/markdown), described, not schema'd. */
  alternatives?: Record<string, string>;
  headers?: Record<string, string>;
};

export type Operation = {
  summary: string;
  description?: string;
  tag: string;
  /** What the caller must be allowed to do (authorize()); null: public, no credential. */
  action: Action | null;
  query?: z.ZodType;
  /** The schema apiRoute validates the JSON body with (`body:` in the route file). */
  body?: z.ZodType;
  /**
   * A body the route reads and decodes itself (not through apiRoute's `body:`): its JSON encoding
   * as documented. Refusals: 400 when it does not decode, 413 when too large.
   */
  decodedBody?: z.ZodType;
  /** Request encodings other than JSON, described (the JSON one is `body` or `decodedBody`). */
  bodyAlternatives?: Record<string, string>;
  bodyExample?: unknown;
  headers?: { name: string; schema: z.ZodType; required: boolean; description: string }[];
  answers: Answer[];
  /** Failures this operation answers beyond those every route through apiRoute may answer. */
  failures?: Failure[];
};

export type RouteEntry = {
  /** Under /api/v1, with `{param}` for a dynamic segment. */
  path: string;
  params?: Record<string, z.ZodType>;
  operations: Partial<Record<Method, Operation>>;
};
