// Canonical JSON, the one form Countersign hashes: RFC 8785 (JSON Canonicalization Scheme).
// Object members sorted by their names' UTF-16 code units, no whitespace, strings and numbers
// spelled as ECMAScript's JSON.stringify spells them (RFC 8785 §3.2.2 adopts exactly that).
//
// A JavaScript value is first read as the JSON value JSON.stringify would make of it: `toJSON` is
// honoured (a Date becomes its ISO string), members whose value is undefined, a function or a
// symbol are left out, such array slots and non-finite numbers are written as null. BigInt and
// cycles have no JSON form and throw a TypeError.
//
// No version is recorded, because there is only one: every hash stored before this module (audit entries, outcome content hashes,
// approval request hashes, argument digests) was computed over sorted keys and JSON.stringify's
// spelling of values that came from JSON (parsed request bodies, parsed jsonb); on those this
// module writes exactly the same text (lib/json/canonical.test.ts checks it against each former
// form), so no stored hash changes. A change of form that does change hashes must get a new
// version, recorded with the hash (as the `:v1:` in the keyed hashes' labels is).

export type CanonicalOptions = {
  /**
   * `keep` (default): `{"note": null}` and `{}` differ. `omit`: members whose value is null are
   * left out at every depth (array slots stay), for content where a producer writes null and
   * absent interchangeably for "not there" (outcome records, approval requests).
   */
  nullMembers?: 'keep' | 'omit';
};

/** The canonical JSON text of a value (RFC 8785). Throws a TypeError on values JSON cannot hold. */
export function canonicalJson(value: unknown, options: CanonicalOptions = {}): string {
  const text = write(value, options.nullMembers === 'omit', []);
  if (text === undefined) throw new TypeError(`canonicalJson: ${typeof value} has no JSON form`);
  return text;
}

// undefined: the value has no JSON form here (left out as a member, null as an array slot).
function write(value: unknown, omitNull: boolean, open: object[]): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('canonicalJson: BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const obj = value as object;
  const withJson = obj as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return write(withJson.toJSON(), omitNull, open);
  if (open.includes(obj)) throw new TypeError('canonicalJson: cyclic structure');
  open.push(obj);
  let out = '';
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) out += `${i ? ',' : ''}${write(obj[i], omitNull, open) ?? 'null'}`;
    out = `[${out}]`;
  } else {
    const record = obj as Record<string, unknown>;
    // Array#sort compares strings by UTF-16 code units, as RFC 8785 §3.2.3 asks.
    for (const key of Object.keys(record).sort()) {
      const v = record[key];
      if (v === null && omitNull) continue;
      const text = write(v, omitNull, open);
      if (text !== undefined) out += `${out ? ',' : ''}${JSON.stringify(key)}:${text}`;
    }
    out = `{${out}}`;
  }
  open.pop();
  return out;
}
