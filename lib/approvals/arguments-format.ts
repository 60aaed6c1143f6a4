// Arguments shown as data (docs/design.md "What a reviewer sees: what will run"): their JSON
// types, a value as text, and a queue row's preview. Pure, without Node built-ins, so the request
// page's client components can use it; lib/approvals/arguments.ts re-exports it.
import { canonicalJson } from '@/lib/json/canonical';

export type JsonScalar = string | number | boolean | null;
export type JsonValue = JsonScalar | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

export type ArgumentType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/**
 * A value as text with its JSON type. A number in its canonical JSON form (what the digest covers,
 * never rounded, abbreviated or localized); a string as it is; an object or array by its size.
 */
export function formatScalar(v: JsonValue): { type: ArgumentType; text: string } {
  if (v === null) return { type: 'null', text: 'null' };
  if (typeof v === 'string') return { type: 'string', text: v };
  if (typeof v === 'number') return { type: 'number', text: canonicalJson(v) };
  if (typeof v === 'boolean') return { type: 'boolean', text: v ? 'true' : 'false' };
  if (Array.isArray(v)) return { type: 'array', text: plural(v.length, 'item') };
  return { type: 'object', text: plural(Object.keys(v).length, 'field') };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const PREVIEW_FIELDS = 3;
export const PREVIEW_CHARS = 80;

export type PreviewField = { key: string; value: string; type: string };

/**
 * What a queue row shows of (masked) arguments: the fields an admin named for the tool, in that
 * order, those present (a dotted path `a.b` reaches into objects; a top-level key with a dot is
 * found first); when none is named or present, the first three top-level scalar fields in the
 * order sent. Keys and values longer than 80 characters end in "…".
 */
export function argumentPreview(masked: JsonObject, fields?: readonly string[] | null): PreviewField[] {
  const named = (fields ?? []).flatMap((field) => {
    const found = lookup(masked, field);
    return found === undefined ? [] : [entry(field, found)];
  });
  if (named.length > 0) return named;
  return Object.entries(masked)
    .filter(([, v]) => v === null || typeof v !== 'object')
    .slice(0, PREVIEW_FIELDS)
    .map(([k, v]) => entry(k, v));
}

function lookup(obj: JsonObject, field: string): JsonValue | undefined {
  if (Object.hasOwn(obj, field)) return obj[field];
  let at: JsonValue | undefined = obj;
  for (const part of field.split('.')) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, part)) return undefined;
    at = at[part];
  }
  return at;
}

function entry(key: string, v: JsonValue): PreviewField {
  const { type, text } = formatScalar(v);
  return { key: truncate(key), value: truncate(text), type };
}

// By code points, so an emoji is never cut in half.
function truncate(s: string): string {
  const chars = Array.from(s);
  return chars.length <= PREVIEW_CHARS ? s : `${chars.slice(0, PREVIEW_CHARS - 1).join('')}…`;
}
