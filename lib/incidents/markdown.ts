// An incident as a Markdown report fit to paste into a ticket (docs/api.md: `?format=markdown`). Pure.
//
// Everything that comes from records (summaries, tool and server names, keys, ids) is untrusted:
// `escapeMarkdown` makes it one line of literal text, so it cannot open HTML, links, images,
// emphasis, headings or list items, nor break out of a table cell. Its input must already be
// redacted (masked summaries, no arguments): this module adds nothing beyond what it is given.
import { findingLabel } from './findings';
import { oneSentence } from './summary';
import { timelineKindLabel, type Finding, type IncidentSummary, type Severity, type TimelineEntry } from './types';

export type IncidentReport = {
  requestRef: string;
  /** The one sentence, when the caller has a fuller one (e.g. with approvals); else from the summary. */
  sentence?: string;
  summary: Pick<IncidentSummary, 'done' | 'notDone' | 'unknown'> & { unknownTools?: string[] };
  findings: readonly Finding[];
  /** Oldest first, as the caller ordered it. */
  timeline: readonly TimelineEntry[];
  /**
   * Identifiers (idempotency keys, record, event and grant ids) shown as code spans wherever
   * they occur, so a report pasted into a plain-text ticket still holds them as typed. The
   * request reference always is one.
   */
  identifiers?: readonly string[];
};

// Bidirectional overrides and zero-width characters can make text read other than it is.
const INVISIBLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// Control characters (line breaks included) would end a table row or a list item.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// Characters that can start inline Markdown or HTML anywhere in a line. Backslash-escaping any
// ASCII punctuation is valid CommonMark; `|` escaped this way stays inside a GFM table cell.
const INLINE = /[\\`*_[\]<>|~#&@$!]/g;

/** One line of literal Markdown text: no HTML, links, emphasis or block structure. */
export function escapeMarkdown(text: string | null | undefined): string {
  const line = (text ?? '').replace(INVISIBLE, '').replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  return (
    line
      .replace(INLINE, (c) => `\\${c}`)
      // GFM turns bare "http://…", "www.…" and "mailto:…" into links; break the patterns.
      .replace(/:(?=\/\/)/g, '\\:')
      .replace(/\b(www)\./gi, '$1\\.')
      .replace(/\b(mailto|xmpp):/gi, '$1\\:')
      // Block markers at the start of a line: list items, ordered lists, quotes, headings.
      .replace(/^([-+=])/, '\\$1')
      .replace(/^(\d+)([.)])/, '$1\\$2')
  );
}

/**
 * An identifier as a CommonMark code span: literal, as typed, searchable. The fence is one
 * backtick longer than any run inside it; `|` is escaped (GFM table cells end on it, even inside
 * code); line breaks and invisible characters cannot be in it.
 */
export function codeSpan(id: string): string {
  const text = id.replace(INVISIBLE, '').replace(CONTROL, ' ').replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') || /^ .* $/.test(text) ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** One line of literal text in which the identifiers are code spans and the rest is escaped. */
function literal(text: string | null | undefined, ids: readonly string[]): string {
  const line = (text ?? '').replace(INVISIBLE, '').replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
  const usable = [...new Set(ids)].filter((id) => id.length >= 3 && line.includes(id));
  if (!usable.length) return escapeMarkdown(line);
  usable.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`(${usable.map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`);
  return line
    .split(pattern)
    .map((part, i) => {
      if (i % 2) return codeSpan(part);
      // escapeMarkdown trims: keep the spaces around the identifiers.
      const lead = /^\s/.test(part) ? ' ' : '';
      const trail = /\s$/.test(part) && part.trim() ? ' ' : '';
      return lead + escapeMarkdown(part) + trail;
    })
    .join('');
}

const SEVERITY_ORDER: Severity[] = ['high', 'medium', 'low'];
const severityLabel: Record<Severity, string> = { high: 'High', medium: 'Medium', low: 'Low' };

export function incidentMarkdown(report: IncidentReport): string {
  const { summary } = report;
  const findings = [...report.findings].sort(
    (a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity),
  );
  // In the order given: the timeline builder orders it (causes before effects when clocks disagree).
  const timeline = report.timeline;
  const ids = [report.requestRef, ...(report.identifiers ?? [])];
  const text = (t: string | null | undefined) => literal(t, ids);
  const bullets = (items: readonly string[]) => items.map((item) => `- ${text(item)}`);
  const cell = (t: string) => text(t) || ' ';
  const lines = [
    `# Incident ${codeSpan(report.requestRef)}`,
    '',
    text(report.sentence ?? oneSentence(summary)),
    '',
    '_Redacted report: no credentials, tool arguments or raw results._',
    '',
    ...section(`Done (${summary.done.length})`, bullets(summary.done)),
    ...section(`Not done (${summary.notDone.length})`, bullets(summary.notDone)),
    ...section(`Unknown: check before repeating (${summary.unknown.length})`, bullets(summary.unknown)),
    ...section(
      `Findings (${findings.length})`,
      findings.map((f) => findingLine(f, text)),
    ),
    ...section(`Timeline (${timeline.length})`, timelineTable(timeline, cell)),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

function section(title: string, body: string[]): string[] {
  return [`## ${title}`, '', ...(body.length ? body : ['_None._']), ''];
}

function findingLine(f: Finding, text: (t: string) => string): string {
  const ids = f.recordIds.map(codeSpan).join(', ');
  return (
    `- **${severityLabel[f.severity]}**: ${findingLabel[f.kind] ?? escapeMarkdown(f.kind)}. ` +
    `${text(f.explanation)} Records: ${ids}.`
  );
}

function timelineTable(entries: readonly TimelineEntry[], cell: (t: string) => string): string[] {
  if (!entries.length) return [];
  return [
    '| Time (UTC) | Kind | What | Detail |',
    '| --- | --- | --- | --- |',
    ...entries.map((e) => `| ${[at(e.at), kindCell(e), e.title, e.detail ?? ''].map(cell).join(' | ')} |`),
  ];
}

// The label is ours; an unexpected kind and the status are escaped with the rest of the cell.
const kindCell = (e: TimelineEntry) => `${timelineKindLabel[e.kind] ?? e.kind}${e.status ? ` (${e.status})` : ''}`;

// Seconds and milliseconds matter: retries a few hundred milliseconds apart are a finding.
function at(d: Date): string {
  return Number.isNaN(d.getTime()) ? '—' : d.toISOString().replace('T', ' ').replace('Z', '');
}
