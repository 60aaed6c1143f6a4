// The argument digest (API.md, `argsDigest`): what Countersign stores and binds grants to instead
// of the arguments. The arguments themselves never leave the agent's process.
//
// Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, JSON's own number and
// string spelling (as RFC 8785 does for the values JSON can hold). Members whose value is
// `undefined` are left out, as JSON.stringify does; `null` is kept, because a tool may read
// `{ "note": null }` differently from `{}`.
import { createHash } from 'node:crypto';

export type ArgsDigest = `sha256:${string}`;

/** The canonical JSON text of a value. Throws on values JSON cannot hold (cycles, BigInt, functions). */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

/** `sha256:` and the lowercase hex SHA-256 of the canonical JSON of the arguments (`{}` when none). */
export function argsDigest(args: Record<string, unknown> | undefined | null): ArgsDigest {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(args ?? {}), 'utf8')
    .digest('hex')}`;
}

/** A stable SHA-256 hex of several parts, e.g. to derive an Idempotency-Key. */
export function hashParts(...parts: (string | number | null | undefined)[]): string {
  return createHash('sha256')
    .update(canonicalJson(parts.map((p) => p ?? null)), 'utf8')
    .digest('hex');
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // JSON has no NaN or Infinity; JSON.stringify writes null, and -0 as 0.
      return JSON.stringify(value);
    case 'bigint':
      throw new TypeError('canonicalJson: BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      throw new TypeError(`canonicalJson: ${typeof value} has no JSON form`);
  }
  const obj = value as object;
  const withJson = obj as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return write(withJson.toJSON(), seen);
  if (seen.has(obj)) throw new TypeError('canonicalJson: cyclic structure');
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      // As in JSON, an array slot holding undefined or a function is written as null.
      return `[${obj.map((item) => (item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : write(item, seen))).join(',')}]`;
    }
    const members = Object.keys(obj)
      .filter((k) => {
        const v = (obj as Record<string, unknown>)[k];
        return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
      })
      .sort()
      .map((k) => `${JSON.stringify(k)}:${write((obj as Record<string, unknown>)[k], seen)}`);
    return `{${members.join(',')}}`;
  } finally {
    seen.delete(obj);
  }
}
