// A mapped record checked by the same schema as POST /api/v1/outcomes; a refusal names the span
// attribute at fault (map.ts ATTRIBUTE_OF), not only the record field it became. Pure.
import { outcomeSchema, type Outcome } from '@/lib/outcomes/schemas';
import { ATTRIBUTE_OF } from './map';

function attributeOf(path: ReadonlyArray<PropertyKey>): string {
  for (let n = path.length; n > 0; n--) {
    const key = path.slice(0, n).map(String).join('.');
    if (ATTRIBUTE_OF[key]) return n === path.length ? ATTRIBUTE_OF[key] : `${ATTRIBUTE_OF[key]} (${path.join('.')})`;
  }
  return path.join('.') || 'the span';
}

export function validateRecord(
  record: Record<string, unknown>,
): { ok: true; record: Outcome } | { ok: false; reason: string } {
  const parsed = outcomeSchema.safeParse(record);
  if (parsed.success) return { ok: true, record: parsed.data };
  const reasons = parsed.error.issues.map((i) =>
    i.code === 'unrecognized_keys'
      ? `${i.keys.map((k) => attributeOf([...i.path, k])).join(', ')}: not supported by this console`
      : `${attributeOf(i.path)}: ${i.message}`,
  );
  return { ok: false, reason: [...new Set(reasons)].join('; ') };
}
