// How the request page and the queue write arguments as text (docs/design.md "What a reviewer
// sees: what will run"): masked parts told apart, long text folded, lookalike keys spelled out, and
// why arguments are absent. Pure.

/** The masker's placeholders, `[masked:email]`, inside any string value. */
const MASKED = /\[masked:[a-z_]+\]/g;

export type TextPart = { text: string; masked: boolean };

/** A value split into its plain and masked parts, in order, for a distinct style on the masked ones. */
export function maskedParts(text: string): TextPart[] {
  const parts: TextPart[] = [];
  let at = 0;
  for (const m of text.matchAll(MASKED)) {
    if (m.index > at) parts.push({ text: text.slice(at, m.index), masked: false });
    parts.push({ text: m[0], masked: true });
    at = m.index + m[0].length;
  }
  if (at < text.length || parts.length === 0) parts.push({ text: text.slice(at), masked: false });
  return parts;
}

export const FOLD_CHARS = 200;
export const FOLD_LINES = 3;
const WORD_SLACK = 24;

/**
 * Whether a string is long (over 200 characters, or over 3 lines) and what shows of it while
 * folded: its first 3 lines, at most 200 characters (at a word's end when one is near), never
 * cutting a masked placeholder or a character in half.
 */
export function foldText(text: string): { folded: boolean; head: string } {
  const chars = Array.from(text);
  if (chars.length <= FOLD_CHARS && !text.includes('\n')) return { folded: false, head: text };
  let head = text.split('\n').slice(0, FOLD_LINES).join('\n');
  const headChars = Array.from(head);
  if (headChars.length > FOLD_CHARS) {
    head = headChars.slice(0, FOLD_CHARS).join('');
    // At a word's end when one is near, so the folded text does not stop mid-word.
    const space = head.search(/\s\S*$/);
    if (space >= head.length - WORD_SLACK) head = head.slice(0, space);
    // A placeholder cut at the end is kept whole: "[masked:em" would read as the value itself.
    for (const m of text.matchAll(MASKED))
      if (m.index < head.length && m.index + m[0].length > head.length) head = text.slice(0, m.index + m[0].length);
  }
  return { folded: head !== text, head };
}

// Letters, digits, punctuation and symbols are quoted as well; spaces, marks and invisible ones only named.
const VISIBLE = /^[\p{L}\p{N}\p{P}\p{S}]$/u;

/** The characters of a key outside printable ASCII, as code points: how two lookalike keys differ. */
export function unusualCharacters(key: string): string[] {
  const seen = new Set<string>();
  for (const c of key)
    if (!/[\x20-\x7e]/.test(c))
      seen.add(`${VISIBLE.test(c) ? `“${c}” ` : ''}U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
  return [...seen];
}

/** An ISO 8601 instant, as the API writes them in `argumentsNote`. */
const INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;

export type NoteView = { tone: 'warn' | 'neutral'; text: string };

/**
 * What the request page says when it shows no arguments: `note` is the API's `argumentsNote`
 * (docs/api.md "Approvals and grants"), its times written as `when` writes them. Arguments the agent
 * never sent are a warning: the reviewer then approves the agent's own description.
 */
export function argumentsNoteView(note: string | null, sent: boolean, when: (d: Date) => string): NoteView | null {
  if (!sent || note?.startsWith('not sent'))
    return {
      tone: 'warn',
      text: 'The agent sent no arguments: you would approve its own description of the call, not the call itself. Nothing here shows what will run.',
    };
  if (note === null) return null;
  if (note === 'reviewers only') return { tone: 'neutral', text: 'Only reviewers and admins see the arguments.' };
  const dated = note.replace(INSTANT, (iso) => when(new Date(iso)));
  if (note.startsWith('erased')) return { tone: 'neutral', text: `Arguments ${dated}; their digest stays.` };
  return { tone: 'neutral', text: `${dated.charAt(0).toUpperCase()}${dated.slice(1)}.` };
}
