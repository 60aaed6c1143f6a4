// The arguments a request's tool will be called with, as a tree (docs/design.md "What a reviewer
// sees: what will run"): each field with its value and JSON type, nested objects indented, arrays
// with their length, long text folded, numbers in their canonical JSON form (what the digest
// covers), masked values set apart, and keys that look alike pointed out by name.
import { formatScalar, type JsonObject, type JsonValue } from '@/lib/approvals/arguments-format';
import { lookalikeGroups } from '@/lib/text/confusables';
import { Caution } from './caution';
import { FoldedText } from './folded-text';
import { MaskedText } from './masked-text';
import { foldText, unusualCharacters } from './argument-text';

type Lookalikes = { where: string; keys: string[] };

const isObject = (v: JsonValue): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const childPath = (path: string, key: string) => (path ? `${path}.${key}` : key);
const itemPath = (path: string, i: number) => `${path}[${i}]`;

/** Sibling keys with one skeleton, object by object (parents before children). */
function findLookalikes(args: JsonObject): Lookalikes[] {
  const found: Lookalikes[] = [];
  // Iterative: the depth is bounded when staged, but a walk need not rely on it.
  const stack: [JsonValue, string][] = [[args, '']];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], itemPath(path, i)]);
    } else if (isObject(value)) {
      for (const keys of lookalikeGroups(Object.keys(value))) found.push({ where: path, keys });
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], childPath(path, entries[i][0])]);
    }
  }
  return found;
}

const flagOf = (where: string, key: string) => `${where}\u0000${key}`;

export function ArgumentTree({ args }: { args: JsonObject }) {
  const lookalikes = findLookalikes(args);
  const flagged = new Set(lookalikes.flatMap((g) => g.keys.map((k) => flagOf(g.where, k))));
  const entries = Object.entries(args);
  return (
    <div className="space-y-3" data-testid="argument-tree">
      {lookalikes.length ? <LookalikeWarning groups={lookalikes} /> : null}
      {entries.length ? (
        <Fields entries={entries} path="" depth={0} flagged={flagged} />
      ) : (
        <p className="text-sm text-slate-600">None: the tool is called with an empty object.</p>
      )}
    </div>
  );
}

function LookalikeWarning({ groups }: { groups: Lookalikes[] }) {
  return (
    <Caution testId="lookalike-keys">
      <p className="font-medium">Some keys look alike but are different fields: check which one the tool reads.</p>
      <ul className="mt-1 space-y-1">
        {groups.map((g, i) => (
          <li key={i} className="[overflow-wrap:anywhere]">
            {g.keys.map((k, j) => {
              const unusual = unusualCharacters(k);
              return (
                <span key={k}>
                  {j > 0 ? (j === g.keys.length - 1 ? ' and ' : ', ') : null}
                  <code className="rounded bg-white/70 px-1 font-mono text-xs">{k}</code>
                  {unusual.length ? <span className="text-xs"> (with {unusual.join(', ')})</span> : null}
                </span>
              );
            })}
            {g.where ? <span className="text-xs"> in {g.where}</span> : null}
          </li>
        ))}
      </ul>
    </Caution>
  );
}

function Fields({
  entries,
  path,
  depth,
  flagged,
  items = false,
}: {
  entries: [string, JsonValue][];
  path: string;
  depth: number;
  flagged: Set<string>;
  items?: boolean;
}) {
  // Nested levels are indented; past a few, less, so a deep tree still fits a phone.
  const nested =
    depth === 0 ? '' : depth < 8 ? 'ml-1 border-l border-slate-200 pl-3' : 'border-l border-slate-200 pl-1.5';
  return (
    <ul className={`space-y-1.5 ${nested}`}>
      {entries.map(([key, value], i) => (
        <Field
          key={i}
          name={key}
          value={value}
          path={items ? itemPath(path, i) : childPath(path, key)}
          depth={depth}
          isItem={items}
          lookalike={!items && flagged.has(flagOf(path, key))}
          flagged={flagged}
        />
      ))}
    </ul>
  );
}

function Field({
  name,
  value,
  path,
  depth,
  isItem,
  lookalike,
  flagged,
}: {
  name: string;
  value: JsonValue;
  path: string;
  depth: number;
  isItem: boolean;
  lookalike: boolean;
  flagged: Set<string>;
}) {
  const { type, text } = formatScalar(value);
  const children: [string, JsonValue][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : isObject(value)
      ? Object.entries(value)
      : [];
  const container = type === 'object' || type === 'array';
  const long = type === 'string' && foldText(text).folded;
  const key = (
    <span
      data-testid="argument-key"
      className={`font-mono text-xs [overflow-wrap:anywhere] ${isItem ? 'text-slate-500' : 'font-semibold text-slate-900'}`}
    >
      {isItem ? `[${name}]` : name}
    </span>
  );
  const flag = lookalike ? (
    <span className="text-xs font-semibold text-amber-800" data-testid="lookalike-flag">
      <span aria-hidden>⚠ </span>looks like another key
    </span>
  ) : null;
  const typeTag = (
    <span className="ml-auto shrink-0 text-[11px] uppercase tracking-wide text-slate-500" data-testid="argument-type">
      {container ? `${type} · ${text}` : type}
    </span>
  );
  return (
    <li data-testid="argument" data-path={path} data-type={type}>
      <div className="flex flex-wrap items-baseline gap-x-2 gap-y-0.5">
        {key}
        {flag}
        {container || long ? null : <Scalar type={type} text={text} />}
        {typeTag}
      </div>
      {long ? (
        <div className="mt-1 rounded-md bg-slate-50 px-2 py-1.5 ring-1 ring-inset ring-slate-200">
          <FoldedText
            text={text}
            what={isItem ? `item ${name}` : name}
            className="whitespace-pre-wrap font-mono text-xs text-slate-900 [overflow-wrap:anywhere]"
          />
        </div>
      ) : null}
      {children.length ? (
        <div className="mt-1.5">
          <Fields entries={children} path={path} depth={depth + 1} flagged={flagged} items={Array.isArray(value)} />
        </div>
      ) : null}
    </li>
  );
}

function Scalar({ type, text }: { type: string; text: string }) {
  if (type === 'string' && text === '')
    return <span className="font-mono text-xs italic text-slate-500">empty text</span>;
  return (
    <span
      data-testid="argument-value"
      className={`min-w-0 whitespace-pre-wrap font-mono text-xs [overflow-wrap:anywhere] ${type === 'null' ? 'italic text-slate-500' : 'text-slate-900'}`}
    >
      {type === 'string' ? <MaskedText text={text} /> : text}
    </span>
  );
}
