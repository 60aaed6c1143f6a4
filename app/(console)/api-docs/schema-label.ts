// A JSON Schema in one short phrase for the reference page's tables ("string ≤ 200", "one of a | b").
type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  format?: string;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
};

const SAFE_INT = 9_007_199_254_740_991;

export function schemaLabel(s: Schema | undefined): string {
  if (!s) return 'any';
  if (s.enum) return s.enum.map(String).join(' | ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.anyOf) return [...new Set(s.anyOf.map(schemaLabel))].join(' or ');
  const type = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  if (type === 'array') return `array of ${schemaLabel(s.items)}`;
  const bounds = [
    s.format,
    s.maxLength !== undefined ? `≤ ${s.maxLength} chars` : undefined,
    s.minimum !== undefined && s.minimum > -SAFE_INT ? `≥ ${s.minimum}` : undefined,
    s.maximum !== undefined && s.maximum < SAFE_INT ? `≤ ${s.maximum}` : undefined,
  ].filter(Boolean);
  return bounds.length ? `${type} (${bounds.join(', ')})` : type;
}
