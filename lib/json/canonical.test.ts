import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson } from './canonical';

// RFC 8785's own examples: §3.2.2 (values), §3.2.3 (sorting) and Appendix B (numbers, given there
// as IEEE 754 bit patterns).
describe('RFC 8785 test vectors', () => {
  it('§3.2.2: literals, numbers and strings', () => {
    const input = String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`;
    expect(canonicalJson(JSON.parse(input))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('§3.2.3: members sorted by UTF-16 code units', () => {
    const input = String.raw`{
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis"
    }`;
    expect(canonicalJson(JSON.parse(input))).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",' +
        '"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  const bits = (hex: string) => new DataView(new BigUint64Array([BigInt(`0x${hex}`)]).buffer).getFloat64(0, true);
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('Appendix B: %s is %s', (hex, expected) => {
    expect(canonicalJson(bits(hex))).toBe(expected);
    expect(canonicalJson([bits(hex)])).toBe(`[${expected}]`);
  });

  // RFC 8785 makes NaN and Infinity an error; JavaScript's JSON mapping (JSON.stringify, and the
  // agent-side digest before this module) reads them as null first, and that is kept.
  it('Appendix B: NaN and Infinity (7fffffffffffffff, 7ff0000000000000) have no JSON form: null', () => {
    expect(canonicalJson([bits('7fffffffffffffff'), bits('7ff0000000000000')])).toBe('[null,null]');
  });
});

// The four forms this module replaced (audit chain, approval request hash, outcome content,
// argument digest) wrote these texts for these values, by hand from their rules: keys sorted
// by code units at every depth, JSON.stringify's spelling; the audit chain and the digest kept
// null members, approvals and outcomes left them out. Stored hashes rest on these texts.
const FORMER: [name: string, json: string, kept: string, omitted: string][] = [
  ['flat', '{"b":1,"a":"x"}', '{"a":"x","b":1}', '{"a":"x","b":1}'],
  ['null members', '{"note":null,"a":{"b":null,"c":1}}', '{"a":{"b":null,"c":1},"note":null}', '{"a":{"c":1}}'],
  ['null array slots stay', '{"a":[null,{"x":null}]}', '{"a":[null,{"x":null}]}', '{"a":[null,{}]}'],
  ['integer-like keys', '{"9":1,"10":2,"B":3,"a":4}', '{"10":2,"9":1,"B":3,"a":4}', '{"10":2,"9":1,"B":3,"a":4}'],
  ['numbers', '[1.0,-0,1e21,0.1,1E-7]', '[1,0,1e+21,0.1,1e-7]', '[1,0,1e+21,0.1,1e-7]'],
  [
    'escapes',
    String.raw`{"s":"\"\\\n\t\u000fé😀/"}`,
    String.raw`{"s":"\"\\\n\t\u000fé😀/"}`,
    String.raw`{"s":"\"\\\n\t\u000fé😀/"}`,
  ],
  ['top-level null', 'null', 'null', 'null'],
  ['empty', '{"a":{},"b":[]}', '{"a":{},"b":[]}', '{"a":{},"b":[]}'],
];

describe('the forms it replaced', () => {
  it.each(FORMER)('%s: the same text as before', (_name, json, kept, omitted) => {
    expect(canonicalJson(JSON.parse(json))).toBe(kept);
    expect(canonicalJson(JSON.parse(json), { nullMembers: 'omit' })).toBe(omitted);
  });

  // Audit verification re-hashes the entry as read back from jsonb: the stored text must be its
  // own canonical form again, whatever the member order and the reader.
  it('canonical text read back is canonical again, and means the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('keep' as const, 'omit' as const), (value, nullMembers) => {
        const text = canonicalJson(value, { nullMembers });
        expect(canonicalJson(JSON.parse(text), { nullMembers })).toBe(text);
        if (nullMembers === 'keep') expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('member order does not matter', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 8 }), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(object));
      }),
    );
  });

  it('leaving null members out is the same as not having them', () => {
    expect(canonicalJson({ agent: null, tool: { name: 't', title: null } }, { nullMembers: 'omit' })).toBe(
      canonicalJson({ tool: { name: 't' } }),
    );
  });
});
