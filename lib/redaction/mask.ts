// Masks secrets and personal data in free text before anything is stored or shown
// (docs/design.md, "Never stored, never shown"). A masked value keeps its kind: `[masked:email]`.
//
// Every pattern is either anchored on a literal prefix or starts only at the beginning of a
// run (a look-behind), and repeats are bounded or cannot overlap, so a long input costs
// linear time: no catastrophic backtracking. Checks that regexes do badly (Luhn, entropy,
// digit counts) run in code on each candidate.

export const maskKinds = [
  'private_key',
  'jwt',
  'aws_key',
  'github_token',
  'slack_token',
  'stripe_key',
  'google_api_key',
  'api_key',
  'bearer_token',
  'secret',
  'email',
  'card_number',
  'ssn',
  'phone',
] as const;
export type MaskKind = (typeof maskKinds)[number];

export const maskPlaceholder = (kind: MaskKind) => `[masked:${kind}]`;

/**
 * A detector finds candidates with `pattern`. A named group `keep` is a prefix left in clear
 * (e.g. "Bearer "); the rest of the match is the value. `check` may refuse a candidate (null)
 * or return its own replacement (a card number inside a longer run of digit groups).
 */
interface Detector {
  kind: MaskKind;
  pattern: RegExp;
  check?: (value: string, before: string, after: string) => boolean | string | null;
}

// PEM and OpenSSH private keys ("-----BEGIN OPENSSH PRIVATE KEY-----"), PGP key blocks too.
const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,10}-----/g;

// Applied in order, after private key blocks (whose bodies would otherwise read as tokens).
const DETECTORS: Detector[] = [
  // JWTs before bearer tokens, so "Bearer eyJ…" reads "Bearer [masked:jwt]".
  {
    kind: 'jwt',
    pattern: /(?<![\w-])eyJ[\w-]{6,}\.[\w-]{6,}\.[\w-]*(?:\.[\w-]+){0,2}/g,
  },
  { kind: 'aws_key', pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  {
    kind: 'aws_key',
    pattern:
      /(?<keep>\b(?:aws[_ .-]?secret[_ .-]?(?:access[_ .-]?)?key|secret[_ .-]?access[_ .-]?key)["']?[ \t]{0,3}[:=][ \t]{0,3}["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi,
  },
  { kind: 'github_token', pattern: /(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,})/g },
  { kind: 'slack_token', pattern: /(?<![\w-])(?:xox[abeoprs]|xapp)-[A-Za-z0-9-]{10,}/g },
  { kind: 'stripe_key', pattern: /(?<!\w)(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/g },
  { kind: 'google_api_key', pattern: /(?<![\w-])AIza[\w-]{35}(?![\w-])/g },
  // Our own tokens, and OpenAI/Anthropic-style `sk-…` keys (a digit tells them from words).
  { kind: 'api_key', pattern: /(?<![\w-])cs_(?:live|pat)_[\w-]{8,}/g },
  { kind: 'api_key', pattern: /(?<![\w-])sk-[\w-]{20,}/g, check: (value) => /\d/.test(value) },
  {
    kind: 'bearer_token',
    pattern: /(?<keep>\bBearer[ \t]{1,8})[\w.~+/-]{8,}=*/gi,
    // "a bearer credential" is English; a token has a digit or is long.
    check: (value) => /\d/.test(value) || value.length >= 20,
  },
  {
    kind: 'secret',
    pattern: /(?<keep>\bBasic[ \t]{1,8})[A-Za-z0-9+/]{6,}={0,2}/g,
    check: (value) => isBasicCredential(value),
  },
  {
    kind: 'secret',
    pattern:
      /(?<keep>\b(?:password|passwd|pwd|secret|client[_ .-]?secret|api[_ .-]?key|access[_ .-]?token|refresh[_ .-]?token|auth[_ .-]?token|session[_ .-]?token)["']?[ \t]{0,3}[:=][ \t]{0,3}["']?)[^\s"',;&]{4,}/gi,
  },
  // A password in a URL: scheme://user:password@host
  {
    kind: 'secret',
    pattern: /(?<keep>\b[a-z][a-z0-9+.-]{0,20}:\/\/[^\s:@/?#]{1,200}:)[^\s@/?#]{1,200}(?=@)/gi,
  },
  {
    kind: 'email',
    pattern: /(?<![\w.%+-])[\w.%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])/g,
  },
  // Cards before phones: a 16-digit card in groups of four also looks like a phone number.
  { kind: 'card_number', pattern: /(?<![\w.-])\d+(?:[ -]\d+)*/g, check: maskCardNumbers },
  {
    kind: 'ssn',
    pattern: /(?<![\w.-])(?!000|666|9)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-]|\.\d)/g,
  },
  // International (+CC …), US (555-123-4567, (555) 123-4567) and European national forms
  // (06 12 34 56 78, 030/1234567): dates, amounts and short order numbers fail the checks.
  {
    kind: 'phone',
    pattern: /(?<![\w+])\+\d[\d ().-]{6,22}\d/g,
    check: (value, _before, after) => !/^\d/.test(after) && isInternationalPhone(value),
  },
  {
    kind: 'phone',
    pattern: /(?<![\w.+-])(?:1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w-]|\.\d)/g,
  },
  {
    kind: 'phone',
    pattern: /(?<![\w.,+/-])0\d{1,4}(?:[ ./-]\d{2,8}){1,5}(?![\w/]|[.,-]\d)/g,
    check: isNationalPhone,
  },
  // Last: anything the named kinds did not claim and that still looks random.
  { kind: 'secret', pattern: /(?<![\w+/=-])[\w+/=-]{32,}/g, check: looksRandom },
];

export interface MaskResult {
  text: string;
  /** The kinds masked, each once, in `maskKinds` order. */
  kinds: MaskKind[];
}

export function maskText(s: string): MaskResult {
  const found = new Set<MaskKind>();
  let text = maskPrivateKeyBlocks(s, found);
  for (const detector of DETECTORS) text = applyDetector(text, detector, found);
  return { text, kinds: maskKinds.filter((kind) => found.has(kind)) };
}

/** maskText's text for an optional field: null, undefined and the empty string stay as they are. */
export const mask = <T extends string | null | undefined>(s: T) => (s ? maskText(s).text : s) as T;

/** Masks every string inside JSON-like data (plain objects and arrays); keys are left as is. */
export function maskDeep<T>(value: T): { value: T; kinds: MaskKind[] } {
  const found = new Set<MaskKind>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const masked = maskText(v);
      masked.kinds.forEach((kind) => found.add(kind));
      return masked.text;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  const masked = walk(value) as T;
  return { value: masked, kinds: maskKinds.filter((kind) => found.has(kind)) };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function applyDetector(text: string, detector: Detector, found: Set<MaskKind>): string {
  return text.replace(detector.pattern, (match: string, ...args: unknown[]) => {
    const groups = args.at(-1) as Record<string, string | undefined> | string;
    const keep = typeof groups === 'object' ? (groups.keep ?? '') : '';
    const offset = args.find((a) => typeof a === 'number') as number;
    const value = match.slice(keep.length);
    if (value.startsWith('[masked:')) return match;
    const before = text.slice(Math.max(0, offset - 16), offset);
    const after = text.slice(offset + match.length, offset + match.length + 2);
    const verdict = detector.check ? detector.check(value, before, after) : true;
    if (!verdict) return match;
    found.add(detector.kind);
    return keep + (typeof verdict === 'string' ? verdict : maskPlaceholder(detector.kind));
  });
}

// A truncated key is still a secret: with no END line, everything from BEGIN on is masked.
// indexOf keeps this linear where a lazy regex would rescan for every BEGIN.
function maskPrivateKeyBlocks(text: string, found: Set<MaskKind>): string {
  const begin = new RegExp(PRIVATE_KEY_BEGIN);
  let out = '';
  let from = 0;
  for (let m = begin.exec(text); m; m = begin.exec(text)) {
    const endMarker = text.indexOf('-----END', m.index + m[0].length);
    const endClose = endMarker === -1 ? -1 : text.indexOf('-----', endMarker + 8);
    const stop = endClose === -1 ? text.length : endClose + 5;
    out += text.slice(from, m.index) + maskPlaceholder('private_key');
    found.add('private_key');
    from = stop;
    begin.lastIndex = stop;
  }
  return out + text.slice(from);
}

function isBasicCredential(value: string): boolean {
  try {
    const decoded = atob(value);
    return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
  } catch {
    return false;
  }
}

/**
 * Masks card numbers in a run of digit groups, leftmost-longest: a span of whole groups with
 * 13–19 digits that passes Luhn and, when separated, is grouped like a card (4 digits first,
 * then groups of 3–6). Returns the run with its cards masked, or null when it has none.
 */
function maskCardNumbers(run: string, _before: string, after: string): string | null {
  const groups = run.split(/[ -]/);
  const separators = run.match(/[ -]/g) ?? [];
  // A trailing letter or decimal part makes the last group part of something else.
  const usable = /^[A-Za-z_]|^\.\d/.test(after) ? groups.length - 1 : groups.length;
  const out: string[] = [];
  let masked = false;
  for (let i = 0; i < groups.length;) {
    const size = cardSpanAt(groups, i, usable);
    out.push(size > 0 ? maskPlaceholder('card_number') : groups[i]);
    masked ||= size > 0;
    i += Math.max(size, 1);
    if (i < groups.length) out.push(separators[i - 1]);
  }
  return masked ? out.join('') : null;
}

// Card-shaped groups have at least 3 digits, so a card spans at most 6 of them: this bound
// keeps a long run of digit groups linear.
function cardSpanAt(groups: string[], start: number, end: number): number {
  const first = groups[start]?.length ?? 0;
  if (first !== 4 && (first < 13 || first > 19)) return 0;
  for (let size = Math.min(6, end - start); size >= 1; size--) {
    if (isCardShaped(groups.slice(start, start + size))) return size;
  }
  return 0;
}

function isCardShaped(groups: string[]): boolean {
  const digits = groups.join('');
  if (digits.length < 13 || digits.length > 19) return false;
  const grouped =
    groups.length === 1 || (groups[0].length === 4 && groups.every((g) => g.length >= 3 && g.length <= 6));
  return grouped && passesLuhn(digits);
}

function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

function isInternationalPhone(value: string): boolean {
  const digits = value.replace(/\D/g, '').length;
  return digits >= 8 && digits <= 15 && !/[ .-]{2}|\(\)|[.-][ ]|[ ][.-]/.test(value);
}

// At least 9 digits (a dd.mm.yyyy date has 8) and one kind of separator throughout, so
// "01.12.2026 10" is a date and a time, not a phone number. "000" starts no dialling
// prefix, and the SSN shape (ddd-dd-dddd) is left to the SSN rule, which knows invalid ones.
function isNationalPhone(value: string): boolean {
  const digits = value.replace(/\D/g, '').length;
  const separators = new Set(value.match(/[ ./-]/g));
  return (
    digits >= 9 &&
    digits <= 15 &&
    separators.size === 1 &&
    !value.startsWith('000') &&
    !/^\d{3}-\d{2}-\d{4}$/.test(value)
  );
}

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

// Identifiers are not secrets: UUIDs (also inside "req_<uuid>") and labelled digests
// (sha256:…) stay readable. Hex runs need a digit and a letter. Other runs need two of lower,
// upper and digit, near-random entropy, and must not read as words: in camelCase names and
// paths ("/Users/JohnSmith/Report2024") most characters sit in lowercase runs of 3+, which
// random base64 of this length almost never does (about 0.02% of 32-character tokens).
function looksRandom(token: string, before: string): boolean {
  if (/\b(?:sha1|sha256|sha384|sha512|md5):$/i.test(before)) return false;
  // An absolute path is judged segment by segment: a reviewer must read a file's path, and a
  // temporary folder's random suffix does not make the whole path a token. A random segment of
  // its own length still masks it.
  if (token.startsWith('/') && token.indexOf('/', 1) > 0)
    return token.split('/').some((segment) => segment.length >= 32 && looksRandom(segment, ''));
  const rest = token.replace(UUIDS, '');
  if (rest.length < 32) return false;
  if (/^[0-9a-fA-F]+$/.test(rest)) {
    return /\d/.test(rest) && /[a-fA-F]/.test(rest) && shannonEntropy(rest) >= 3;
  }
  const classes = [/[a-z]/, /[A-Z]/, /\d/].filter((c) => c.test(rest)).length;
  return classes >= 2 && shannonEntropy(rest) >= 4 && wordShare(rest) < 0.6;
}

function wordShare(s: string): number {
  let inWords = 0;
  for (const run of s.match(/[a-z]{3,}/g) ?? []) inWords += run.length;
  return inWords / s.length;
}

// Bits per character; tokens here are ASCII, so a fixed table beats a Map.
function shannonEntropy(s: string): number {
  const counts = new Uint32Array(128);
  for (let i = 0; i < s.length; i++) counts[s.charCodeAt(i) & 127]++;
  let bits = 0;
  for (const n of counts) if (n > 0) bits -= (n / s.length) * Math.log2(n / s.length);
  return bits;
}
