// The tool-catalog lint (docs/catalog.md): what a server's tool definitions, as `tools/list` gives
// them, tell a model and a reviewer, and where that misleads them. Pure and deterministic: the same
// definitions in any order, their keys in any order, give the same findings in the same order. No
// I/O and no Node built-ins, so the console's pages may import it.
//
// Definitions come from servers, so they may be hostile: any value may be missing or of the wrong
// type, schemas may be cyclic or deep (only `inputSchema.properties` is read, one level down, never
// recursively), and a description may be megabytes long. Every pattern runs in time linear in the
// text it reads; the whole text is read, because a model reads all of it, and a cap would be a place
// to hide an instruction past.
import { lookalikeGroups } from '@/lib/text/confusables';

/** A tool as MCP `tools/list` gives it. Typed loosely: nothing in it is trusted to match. */
export type ToolDefinition = {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** The rules, in the order of the design's table; findings of one severity follow this order. */
export const LINT_RULES = [
  'missing_description',
  'vague_name',
  'undeclared_effects',
  'contradiction',
  'ambiguous_pair',
  'no_constraints',
  'instructions_to_model',
  'open_text_write',
  'large_catalog',
] as const;
export type LintRule = (typeof LINT_RULES)[number];

export const LINT_SEVERITIES = ['high', 'medium', 'low'] as const;
export type LintSeverity = (typeof LINT_SEVERITIES)[number];

/**
 * High: the definition works against the person approving calls (text aimed at the model, or a tool
 * that says it only reads while it speaks of changing things). Medium: a model or a reviewer may be
 * led to the wrong call or the wrong decision (effects not declared, two tools hard to tell apart,
 * free text a write tool will execute). Low: the catalog is harder to use well, but says nothing
 * false.
 */
export const LINT_SEVERITY: Record<LintRule, LintSeverity> = {
  instructions_to_model: 'high',
  contradiction: 'high',
  undeclared_effects: 'medium',
  ambiguous_pair: 'medium',
  open_text_write: 'medium',
  missing_description: 'low',
  vague_name: 'low',
  no_constraints: 'low',
  large_catalog: 'low',
};

/**
 * One finding: the rule, its severity, the tools it is about (sorted; none for `large_catalog`,
 * which is about the server) and one sentence of what to change.
 */
export type LintFinding = {
  rule: LintRule;
  severity: LintSeverity;
  tools: string[];
  message: string;
};

export const DESCRIPTION_MIN_CHARS = 20;
export const LARGE_CATALOG_TOOLS = 40;
/** Jaccard similarity at or over which two descriptions are a pair, as a fraction: 3/4. */
const SIMILAR_NUM = 3;
const SIMILAR_DEN = 4;

// ── Words ─────────────────────────────────────────────────────────────────────────────────────

// Words and clause ends: a negation (below) reaches to the end of its clause. An underscore joins:
// "send_email" in a description names a tool, it does not speak of sending.
const WORD_OR_STOP = /[\p{L}\p{N}_'’]+|[.!?;:\n]/gu;
const STOP = /^[.!?;:\n]$/;

/** The words of a lower-cased text, with `null` where a clause ends. */
function clauseWords(lower: string): (string | null)[] {
  const out: (string | null)[] = [];
  const pattern = new RegExp(WORD_OR_STOP); // exec, not matchAll: no iterator per match
  for (let m = pattern.exec(lower); m; m = pattern.exec(lower)) {
    if (STOP.test(m[0])) out.push(null);
    else {
      // Quotes around a word are not part of it: 'only'.
      const word = trim(m[0], "'’");
      if (word) out.push(word);
    }
  }
  return out;
}

const isContracted = (w: string) => w.endsWith("n't") || w.endsWith('n’t');

/**
 * The words of a name: split at anything not a letter or digit (snake_case, kebab-case, dotted and
 * slashed names, spaces) and at camelCase humps ("HTTPRequest" is "http", "request"). Lower-cased.
 */
export function nameWords(name: string): string[] {
  return (name.match(new RegExp(FIRST_WORD, 'gu')) ?? []).map((w) => w.toLowerCase());
}

/**
 * A name's verb: the first word after the last `.` or `/`. Names are conventionally verb first
 * (`refund_payment`, `getUser`), and a dotted or slashed prefix is a namespace (`stripe.refund`,
 * `files/read`). Only the verb is read: the other words are mostly nouns ("get_process_list",
 * "list_actions", "get_updates"), which would be read as verbs if every word were.
 */
export function nameVerb(name: string): string | undefined {
  // One pass from the end (lastIndexOf in a loop would read a long name once per separator).
  for (let i = name.length - 1, end = name.length; i >= -1; i--) {
    if (i >= 0 && name[i] !== '.' && name[i] !== '/') continue;
    const segment = name.slice(i + 1, end);
    if (/[\p{L}\p{N}]/u.test(segment)) return segment.match(FIRST_WORD)?.[0].toLowerCase();
    end = i;
  }
  return undefined;
}
const FIRST_WORD = /\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{N}+|\p{L}+/u;

// ── The rules' word lists ─────────────────────────────────────────────────────────────────────

const VAGUE_VERBS = new Set([
  'resolve',
  'handle',
  'process',
  'manage',
  'execute',
  'run',
  'do',
  'perform',
  'apply',
  'sync',
  'fix',
  'action',
]);

// Each verb with its third-person and -ing forms, spelled out rather than found by a stem (a stem
// "pay" would find "payload", "creat" would find "creation"). Past forms are left out on purpose: in
// a read-only tool's description they describe what is read ("messages sent to you", "the time the
// file was created", "last updated"), not what the tool does.
const CHANGE_VERBS: Record<string, string> = {};
for (const [verb, ...forms] of [
  ['delete', 'deletes', 'deleting'],
  ['remove', 'removes', 'removing'],
  ['send', 'sends', 'sending'],
  ['pay', 'pays', 'paying'],
  ['refund', 'refunds', 'refunding'],
  ['cancel', 'cancels', 'cancelling', 'canceling'],
  ['create', 'creates', 'creating'],
  ['update', 'updates', 'updating'],
  ['write', 'writes', 'writing'],
  ['transfer', 'transfers', 'transferring'],
]) {
  for (const form of [verb, ...forms]) CHANGE_VERBS[form] = verb;
}

// "Does not delete", "never writes or removes", "cannot create, update or delete": a change verb
// after one of these, in the same clause, is a promise not to, not a contradiction.
const NEGATIONS = new Set(['not', 'never', 'no', 'cannot', 'without', 'nor']);
const isNegation = (w: string) => NEGATIONS.has(w) || isContracted(w);

const CONSTRAINT_WORDS = new Set(['only', 'not', 'never', 'cannot', 'must', 'requires', 'unless']);

const OPEN_TEXT_PARAMETERS = new Set(['command', 'query', 'sql', 'script', 'code', 'expression']);

// U+200B–U+200D, U+2060, U+FEFF: zero-width; U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: bidi.
const HIDDEN_CHARACTER = /[\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/u;
// No two repetitions that could share the same spaces: a long run of them stays linear.
const IMPORTANT_TAG = /<\/?\s*important\s*>/i;
const CALL_VERBS = new Set(['call', 'use', 'invoke', 'run']);
/** Words between "ignore" and "instructions", "tell" and "user": "ignore all previous instructions". */
const PHRASE_GAP = 6;

// ── Per tool ──────────────────────────────────────────────────────────────────────────────────

type Tool = {
  name: string;
  description: string;
  /** The description lower-cased, once. */
  lower: string;
  readOnly: boolean;
  annotations: Record<string, unknown>;
  properties: [string, unknown][];
};

function readTool(value: unknown): Tool | null {
  if (!isObject(value) || typeof value.name !== 'string') return null;
  const annotations = isObject(value.annotations) ? value.annotations : {};
  const schema = isObject(value.inputSchema) ? value.inputSchema : {};
  const properties = isObject(schema.properties) && !Array.isArray(schema.properties) ? schema.properties : {};
  const description = typeof value.description === 'string' ? value.description : '';
  return {
    name: value.name,
    description,
    lower: description.toLowerCase(),
    readOnly: annotations.readOnlyHint === true,
    annotations,
    // Sorted: the findings must not depend on the order the server wrote its keys in.
    properties: Object.keys(properties)
      .sort(byCodeUnits)
      .map((k) => [k, properties[k]]),
  };
}

type Found = Omit<LintFinding, 'severity'>;

function missingDescription(t: Tool): Found | null {
  const text = t.description.trim();
  // Code points, counted only when the UTF-16 length leaves it in doubt.
  const chars = text.length >= 2 * DESCRIPTION_MIN_CHARS ? Infinity : [...text].length;
  if (chars >= DESCRIPTION_MIN_CHARS) return null;
  return {
    rule: 'missing_description',
    tools: [t.name],
    message:
      chars === 0
        ? `${t.name} has no description: say in at least ${DESCRIPTION_MIN_CHARS} characters what it does, what it changes and when not to use it.`
        : `${t.name}'s description has ${chars} characters: say in at least ${DESCRIPTION_MIN_CHARS} what it does, what it changes and when not to use it.`,
  };
}

function vagueName(t: Tool): Found | null {
  const verb = nameVerb(t.name);
  if (t.readOnly || !verb || !VAGUE_VERBS.has(verb)) return null;
  return {
    rule: 'vague_name',
    tools: [t.name],
    message: `"${verb}" in ${t.name} hides what the tool changes: name it after its effect (refund_payment, not process_payment).`,
  };
}

function undeclaredEffects(t: Tool): Found | null {
  const { destructiveHint, idempotentHint } = t.annotations;
  if (t.readOnly || typeof destructiveHint === 'boolean' || typeof idempotentHint === 'boolean') return null;
  return {
    rule: 'undeclared_effects',
    tools: [t.name],
    message: `${t.name} may change things but states neither destructiveHint nor idempotentHint: declare whether a call can destroy data and whether repeating it is safe.`,
  };
}

/** The change verbs (base forms) a text speaks of, outside negated clauses. */
function changeVerbs(words: (string | null)[]): Set<string> {
  const found = new Set<string>();
  let negated = false;
  for (const w of words) {
    if (w === null || w === 'but') negated = false;
    else if (isNegation(w)) negated = true;
    else if (!negated && Object.hasOwn(CHANGE_VERBS, w)) found.add(CHANGE_VERBS[w]);
  }
  return found;
}

function contradiction(t: Tool, words: (string | null)[]): Found | null {
  if (!t.readOnly) return null;
  const verb = nameVerb(t.name);
  const inName = verb !== undefined && Object.hasOwn(CHANGE_VERBS, verb) ? CHANGE_VERBS[verb] : undefined;
  const inText = changeVerbs(words);
  const verbs = Object.values(CHANGE_VERBS).filter(
    (v, i, all) => all.indexOf(v) === i && (v === inName || inText.has(v)),
  );
  if (!verbs.length) return null;
  const where =
    inName && inText.size ? 'its name and description speak' : inName ? 'its name speaks' : 'its description speaks';
  return {
    rule: 'contradiction',
    tools: [t.name],
    message: `${t.name} is marked readOnlyHint: true but ${where} of ${verbs.map(ing).join(', ')}: drop readOnlyHint if it changes anything, or reword what it says.`,
  };
}

const ING: Record<string, string> = { pay: 'paying', cancel: 'cancelling', transfer: 'transferring' };
const ing = (verb: string) => ING[verb] ?? (verb.endsWith('e') ? `${verb.slice(0, -1)}ing` : `${verb}ing`);

function noConstraints(t: Tool, words: (string | null)[]): Found | null {
  if (t.readOnly) return null;
  if (words.some((w) => w !== null && (CONSTRAINT_WORDS.has(w) || isContracted(w)))) return null;
  return {
    rule: 'no_constraints',
    tools: [t.name],
    message: `${t.name} may change things but its description states no limit (only, not, never, cannot, must, requires, unless): say what it must not be used for and what it requires.`,
  };
}

/** The words of a text alone, clause ends dropped. */
const plainWords = (words: (string | null)[]) => words.filter((w): w is string => w !== null);

/** Whether `first` is followed within PHRASE_GAP words by one of `then`. */
function phrase(words: string[], first: (w: string, i: number) => boolean, then: Set<string>): boolean {
  let until = -1;
  for (let i = 0; i < words.length; i++) {
    if (i <= until && then.has(words[i])) return true;
    if (first(words[i], i)) until = i + PHRASE_GAP;
  }
  return false;
}

const IGNORE = new Set(['ignore', 'disregard']);
const INSTRUCTIONS = new Set(['instruction', 'instructions']);
const TELL = new Set(['tell', 'mention', 'reveal', 'inform', 'notify']);
const USER = new Set(['user', 'users', "user's", 'user’s']);

// A tool name in running text: letters, digits and the separators names use; a sentence's closing
// period or a quote around it is not part of it.
const NAME_TOKEN = /[\p{L}\p{N}_\-./]+/gu;

/** What in a lower-cased text speaks to the model, in a fixed order; empty when nothing does. */
function addressesModel(text: string, words: string[], others: Map<string, string>, self: string): string[] {
  const reasons: string[] = [];
  if (HIDDEN_CHARACTER.test(text)) reasons.push('zero-width or bidirectional control characters');
  if (IMPORTANT_TAG.test(text)) reasons.push('an <important> tag');
  if (phrase(words, (w) => IGNORE.has(w), INSTRUCTIONS)) reasons.push('"ignore … instructions"');
  if (
    phrase(
      words,
      (w, i) =>
        TELL.has(w) && i > 0 && (isContracted(words[i - 1]) || words[i - 1] === 'never' || words[i - 1] === 'not'),
      USER,
    )
  )
    reasons.push('"do not tell … the user"');
  if (words.some((w, i) => w === 'system' && (words[i + 1] === 'prompt' || words[i + 1] === 'prompts')))
    reasons.push('"system prompt"');
  const called = toolOrders(text, others, self);
  if (called.length) reasons.push(`an order to call ${called.join(', ')}`);
  return reasons;
}

/**
 * Other tools of the catalog the text orders the model to call: "call", "use", "invoke" or "run",
 * then (after an optional "the") another tool's exact name, case aside: "Use read_text_file
 * instead", "always call the get_token tool first". What follows the name is not required ("before
 * refunding, call verify_identity" orders as well). "This tool calls x" describes, and is not read.
 */
function toolOrders(text: string, others: Map<string, string>, self: string): string[] {
  const found = new Set<string>();
  let previous = '';
  let beforePrevious = '';
  const pattern = new RegExp(NAME_TOKEN);
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    const token = trim(m[0], '.-/', false);
    const verb = previous === 'the' ? beforePrevious : previous;
    const other = others.get(token);
    if (other !== undefined && token !== self && CALL_VERBS.has(verb)) found.add(other);
    beforePrevious = previous;
    previous = token;
  }
  return [...found].sort(byCodeUnits);
}

function instructionsToModel(t: Tool, words: string[], others: Map<string, string>): Found | null {
  const self = t.name.toLowerCase();
  const places: string[] = [];
  const reasons = new Set<string>();
  const look = (place: string, text: string, textWords: string[]) => {
    const found = addressesModel(text, textWords, others, self);
    if (!found.length) return;
    places.push(place);
    found.forEach((r) => reasons.add(r));
  };
  look('its description', t.lower, words);
  // A model reads the parameters' descriptions too; only the top level is read (schemas may nest
  // without end).
  for (const [key, schema] of t.properties) {
    if (isObject(schema) && typeof schema.description === 'string') {
      const lower = schema.description.toLowerCase();
      look(`parameter ${key}'s description`, lower, plainWords(clauseWords(lower)));
    }
  }
  if (!places.length) return null;
  return {
    rule: 'instructions_to_model',
    tools: [t.name],
    message: `${places.join(' and ')} of ${t.name} address${places.length > 1 ? '' : 'es'} the model (${[...reasons].join('; ')}): remove what is written for the model and say only what the tool does.`,
  };
}

function openTextWrite(t: Tool): Found | null {
  if (t.readOnly) return null;
  const open = t.properties
    .filter(([key, schema]) => {
      if (!isObject(schema)) return false;
      const type = schema.type;
      const isString = type === 'string' || (Array.isArray(type) && type.includes('string'));
      const constrained = ['enum', 'const', 'pattern', 'format'].some((k) => schema[k] !== undefined);
      // The last word is what a compound names: "shell_command", "sqlQuery"; not "query_limit".
      return isString && !constrained && OPEN_TEXT_PARAMETERS.has(nameWords(key).at(-1) ?? '');
    })
    .map(([key]) => key);
  if (!open.length) return null;
  return {
    rule: 'open_text_write',
    tools: [t.name],
    message: `${t.name} may change things and takes free-form text in ${open.join(', ')}: constrain it (enum, pattern or format) or offer one tool per operation.`,
  };
}

// ── Across tools ──────────────────────────────────────────────────────────────────────────────

/** The words of three letters or more of a lower-cased text, as the Jaccard measure counts them. */
function jaccardWords(lower: string): string[] {
  const set = new Set<string>();
  const pattern = /\p{L}{3,}/gu;
  for (let m = pattern.exec(lower); m; m = pattern.exec(lower)) set.add(m[0]);
  return [...set];
}

/**
 * Tools whose descriptions share at least 3/4 of their words (|A ∩ B| / |A ∪ B| over lower-cased
 * words of 3+ letters), grouped: one finding per group of tools linked pair by pair, so that many
 * near-identical descriptions give one finding, not one per pair. Definitions of one name (an
 * accepted one and its held change) are never compared with each other.
 *
 * Not every pair is compared (Xiao et al., "Efficient similarity joins for near duplicate
 * detection", PPJoin). With every word set ordered the same way, rarest word first, two sets with
 * Jaccard ≥ t share a word among the first |A| − ⌈t·|A|⌉ + 1 of each; |A ∩ B| / |A ∪ B| ≤ min / max,
 * so a set under t times the size of another cannot pair with it; and a shared word at positions i
 * and j leaves at most min(|A| − i, |B| − j) words to share. Only pairs passing all three are
 * counted exactly, and a pair already in one group is not counted at all.
 */
function similarDescriptions(tools: Tool[]): Found[] {
  const names = [...new Set(tools.map((t) => t.name))].sort(byCodeUnits);
  const nameId = new Map(names.map((n, i) => [n, i]));
  const group = new UnionFind(names.length);
  const wordsOf = new Map<number, string[][]>();
  // Identical word sets are joined at once and only one of them is compared further: many copies
  // of one description would otherwise each meet all the others.
  const byWords = new Map<string, number>();
  const distinct: { name: number; words: string[] }[] = [];
  for (const t of tools) {
    const words = jaccardWords(t.lower);
    if (!words.length) continue;
    const name = nameId.get(t.name)!;
    const known = wordsOf.get(name);
    if (known) known.push(words);
    else wordsOf.set(name, [words]);
    const key = words.sort(byCodeUnits).join(' ');
    const first = byWords.get(key);
    if (first === undefined) {
      byWords.set(key, name);
      distinct.push({ name, words });
    } else if (first !== name) group.join(first, name);
  }

  // Words as numbers in the global order (rarest first, then by spelling), each set sorted by it.
  const frequency = new Map<string, number>();
  for (const x of distinct) for (const w of x.words) frequency.set(w, (frequency.get(w) ?? 0) + 1);
  const rank = new Map(
    [...frequency.keys()]
      .sort((a, b) => frequency.get(a)! - frequency.get(b)! || byCodeUnits(a, b))
      .map((w, i) => [w, i]),
  );
  const items = distinct
    .map((x) => ({ name: x.name, words: Int32Array.from(x.words, (w) => rank.get(w)!).sort() }))
    .sort((a, b) => a.words.length - b.words.length || a.name - b.name);

  // For each word, the sets it is in the prefix of, and its position there, as parallel lists.
  // For each word (by its number), the sets it is in the prefix of and its position there, as
  // parallel lists; and where in them the sets start that are not too small for what is left.
  const lists = Array.from({ length: rank.size }, () => ({ items: [] as number[], at: [] as number[], start: 0 }));
  const sizes = Int32Array.from(items, (x) => x.words.length);
  const counts = new Int32Array(items.length);
  const touched: number[] = [];
  for (let x = 0; x < items.length; x++) {
    const words = items[x].words;
    const size = sizes[x];
    const least = Math.ceil((SIMILAR_NUM * size) / SIMILAR_DEN);
    const prefix = size - least + 1;
    for (let i = 0; i < prefix; i++) {
      const list = lists[words[i]];
      while (list.start < list.items.length && sizes[list.items[list.start]] < least) list.start++;
      for (let k = list.start; k < list.items.length; k++) {
        const y = list.items[k];
        if (counts[y] < 0) continue;
        const other = sizes[y];
        const need = Math.ceil((SIMILAR_NUM * (size + other)) / (SIMILAR_NUM + SIMILAR_DEN));
        if (counts[y] === 0) touched.push(y);
        const bound = counts[y] + 1 + Math.min(size - i - 1, other - list.at[k] - 1);
        counts[y] = bound >= need ? counts[y] + 1 : -1;
      }
    }
    const a = items[x].name;
    for (const y of touched) {
      const b = items[y].name;
      if (counts[y] > 0 && a !== b && !group.same(a, b) && similar(words, items[y].words)) group.join(a, b);
      counts[y] = 0;
    }
    touched.length = 0;
    for (let i = 0; i < prefix; i++) {
      lists[words[i]].items.push(x);
      lists[words[i]].at.push(i);
    }
  }

  return group.groups().map((ids): Found => {
    const tools = ids.map((i) => names[i]);
    if (tools.length > 2) {
      return {
        rule: 'ambiguous_pair',
        tools,
        message: `The descriptions of these ${tools.length} tools each share at least 75 % of their words with another of them: say what sets each apart, or merge them.`,
      };
    }
    let best = 0;
    for (const a of wordsOf.get(ids[0])!) for (const b of wordsOf.get(ids[1])!) best = Math.max(best, jaccard(a, b));
    return {
      rule: 'ambiguous_pair',
      tools,
      message: `The descriptions of ${tools[0]} and ${tools[1]} share ${Math.floor(best * 100)} % of their words: say what sets each apart, or merge them.`,
    };
  });
}

/**
 * Whether two sorted sets of word numbers have a Jaccard similarity of at least 3/4, in integers so
 * that exactly 3/4 is: |A ∩ B| ≥ 3/7 · (|A| + |B|). Stops once the words left cannot get there.
 */
function similar(a: Int32Array, b: Int32Array): boolean {
  const need = Math.ceil((SIMILAR_NUM * (a.length + b.length)) / (SIMILAR_NUM + SIMILAR_DEN));
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (n + Math.min(a.length - i, b.length - j) < need) return false;
    if (a[i] === b[j]) {
      n++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return n >= need;
}

function jaccard(a: string[], b: string[]): number {
  const set = new Set(b);
  const n = a.filter((w) => set.has(w)).length;
  return n / (a.length + b.length - n);
}

/** Groups of names (as numbers) joined pair by pair. */
class UnionFind {
  private parent: Int32Array;
  constructor(size: number) {
    this.parent = Int32Array.from({ length: size }, (_, i) => i);
  }
  private find(x: number): number {
    let root = x;
    while (this.parent[root] !== root) root = this.parent[root];
    while (this.parent[x] !== root) {
      const next = this.parent[x];
      this.parent[x] = root;
      x = next;
    }
    return root;
  }
  same(a: number, b: number): boolean {
    return this.find(a) === this.find(b);
  }
  join(a: number, b: number): void {
    const [ra, rb] = [this.find(a), this.find(b)];
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  /** Groups of two or more, each in increasing order, groups in order of their first. */
  groups(): number[][] {
    const byRoot = new Map<number, number[]>();
    for (let i = 0; i < this.parent.length; i++) {
      const root = this.find(i);
      const g = byRoot.get(root);
      if (g) g.push(i);
      else byRoot.set(root, [i]);
    }
    return [...byRoot.values()].filter((g) => g.length > 1);
  }
}

function lookalikeNames(names: string[]): Found[] {
  return lookalikeGroups(names).map((group) => ({
    rule: 'ambiguous_pair' as const,
    tools: [...group].sort(byCodeUnits),
    message: `The names ${[...group].sort(byCodeUnits).join(', ')} look alike (the same once case, lookalike letters and invisible characters are set aside): rename them so that they differ visibly.`,
  }));
}

// ── The lint ──────────────────────────────────────────────────────────────────────────────────

/**
 * The findings on one server's catalog: every definition it offers, the accepted ones and any held
 * change (so one name may come twice; each definition is linted, a finding said twice is kept once).
 * Entries that are not objects with a string `name` are not tools and are skipped. Ordered by
 * severity, then rule (in LINT_RULES order), then tool names, then message.
 */
export function lintCatalog(tools: readonly ToolDefinition[]): LintFinding[] {
  const read = (Array.isArray(tools) ? tools : []).map(readTool).filter((t): t is Tool => t !== null);
  const names = [...new Set(read.map((t) => t.name))].sort(byCodeUnits);
  const byLowerName = new Map<string, string>();
  for (const name of names) if (!byLowerName.has(name.toLowerCase())) byLowerName.set(name.toLowerCase(), name);

  const found: Found[] = [];
  for (const t of read) {
    const words = clauseWords(t.lower);
    const plain = plainWords(words);
    for (const f of [
      missingDescription(t),
      vagueName(t),
      undeclaredEffects(t),
      contradiction(t, words),
      noConstraints(t, words),
      instructionsToModel(t, plain, byLowerName),
      openTextWrite(t),
    ])
      if (f) found.push(f);
  }
  found.push(...similarDescriptions(read), ...lookalikeNames(names));
  if (names.length > LARGE_CATALOG_TOOLS) {
    found.push({
      rule: 'large_catalog',
      tools: [],
      message: `The server offers ${names.length} tools, more than ${LARGE_CATALOG_TOOLS}: curate the catalog per workflow, each agent offered only the tools its work needs.`,
    });
  }

  const unique = new Map<string, LintFinding>();
  for (const f of found) {
    const key = JSON.stringify([f.rule, f.tools, f.message]);
    if (!unique.has(key))
      unique.set(key, { rule: f.rule, severity: LINT_SEVERITY[f.rule], tools: f.tools, message: f.message });
  }
  return [...unique.values()].sort(
    (a, b) =>
      LINT_SEVERITIES.indexOf(a.severity) - LINT_SEVERITIES.indexOf(b.severity) ||
      LINT_RULES.indexOf(a.rule) - LINT_RULES.indexOf(b.rule) ||
      compareLists(a.tools, b.tools) ||
      byCodeUnits(a.message, b.message),
  );
}

// ── Helpers ───────────────────────────────────────────────────────────────────────────────────

/**
 * `s` without the characters of `chars` at its end (and at its start unless `start` is false). A
 * loop, not a regular expression: /x+$/ tries every position of a long run of x.
 */
function trim(s: string, chars: string, start = true): string {
  let [from, to] = [0, s.length];
  while (start && from < to && chars.includes(s[from])) from++;
  while (to > from && chars.includes(s[to - 1])) to--;
  return s.slice(from, to);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** By UTF-16 code units: the same on every machine, unlike localeCompare. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareLists(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = byCodeUnits(a[i], b[i]);
    if (c) return c;
  }
  return a.length - b.length;
}
