import { describe, expect, it } from 'vitest';
import { codeSpan, escapeMarkdown, incidentMarkdown, type IncidentReport } from './markdown';
import type { Finding } from './types';

describe('escapeMarkdown', () => {
  it.each([
    [
      'plain text stays readable',
      'Refund 40.00 EUR on order 4411 (2 attempts)',
      'Refund 40.00 EUR on order 4411 (2 attempts)',
    ],
    ['HTML cannot open', '<script>alert(1)</script>', '\\<script\\>alert(1)\\</script\\>'],
    [
      'an image or link cannot open',
      '![x](javascript:alert(1)) [y](http://evil.example)',
      '\\!\\[x\\](javascript:alert(1)) \\[y\\](http\\://evil.example)',
    ],
    [
      'bare URLs are not autolinked',
      'see https://evil.example/a and www.evil.example',
      'see https\\://evil.example/a and www\\.evil.example',
    ],
    ['e-mail and mailto are not autolinked', 'a@b.example mailto:a@b.example', 'a\\@b.example mailto\\:a\\@b.example'],
    [
      'emphasis, code, strikethrough and math',
      '**b** _i_ `c` ~~s~~ $x$',
      '\\*\\*b\\*\\* \\_i\\_ \\`c\\` \\~\\~s\\~\\~ \\$x\\$',
    ],
    ['pipes cannot split a table cell', 'a | b', 'a \\| b'],
    ['entities stay literal', '&lt;b&gt; &#106;', '\\&lt;b\\&gt; \\&\\#106;'],
    ['a backslash stays literal', 'C:\\temp\\*', 'C:\\\\temp\\\\\\*'],
    ['line breaks and tabs become spaces', 'one\ntwo\r\n\tthree\u2028four', 'one two three four'],
    ['control characters become spaces', 'a\u0000b\u001bc', 'a b c'],
    ['bidi overrides and zero-width characters are dropped', 'abc\u202Efed\u200b', 'abcfed'],
    ['a heading cannot start', '# pwned', '\\# pwned'],
    ['a quote cannot start', '> pwned', '\\> pwned'],
    ['a list item cannot start', '- pwned', '\\- pwned'],
    ['a plus list item cannot start', '+ pwned', '\\+ pwned'],
    ['an ordered list cannot start', '12. pwned', '12\\. pwned'],
    ['an ordered list with a parenthesis cannot start', '3) pwned', '3\\) pwned'],
    ['a leading indent cannot make a code block', '      code', 'code'],
    ['empty', '', ''],
  ])('%s', (_name, input, expected) => {
    expect(escapeMarkdown(input)).toBe(expected);
  });

  it('accepts null and undefined', () => {
    expect(escapeMarkdown(null)).toBe('');
    expect(escapeMarkdown(undefined)).toBe('');
  });
});

/** The cells of one table row, honouring backslash escapes. */
function cells(row: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < row.length; i++) {
    if (row[i] === '\\') {
      current += row[i] + (row[i + 1] ?? '');
      i++;
    } else if (row[i] === '|') {
      out.push(current.trim());
      current = '';
    } else current += row[i];
  }
  out.push(current.trim());
  return out.slice(1, -1);
}

const finding = (more: Partial<Finding>): Finding => ({
  kind: 'unsafe_replay',
  severity: 'high',
  recordIds: ['r1', 'r2'],
  explanation: 'Replayed with another key.',
  ...more,
});

const hostile = 'x | y\n| --- |\n<img src=x onerror=alert(1)> [a](http://evil.example)';

const report: IncidentReport = {
  requestRef: 'req_refund_5120',
  summary: {
    done: ['refund_payment on billing-mcp: Refund 15.00 EUR on order 5120'],
    notDone: [],
    unknown: [
      'refund_payment on billing-mcp: Refund 15.00 EUR on order 5120 (connection lost; key refund-5120-v1): it may have taken effect; check before repeating',
    ],
    unknownTools: ['refund_payment'],
  },
  findings: [
    finding({ kind: 'unbounded_retry', severity: 'medium', recordIds: ['r3'], explanation: 'Tried 5 times.' }),
    finding({}),
  ],
  timeline: [
    { at: new Date('2026-11-30T12:00:00Z'), kind: 'outcome', title: 'refund_payment: unknown (connection lost)' },
    { at: new Date('2026-11-30T12:00:04.250Z'), kind: 'outcome', title: 'refund_payment completed', detail: hostile },
  ],
};

describe('incidentMarkdown', () => {
  const md = incidentMarkdown(report);
  const lines = md.split('\n');

  it('has a heading, the one sentence, the three lists, findings and a timeline', () => {
    expect(lines[0]).toBe('# Incident `req_refund_5120`');
    expect(md).toContain('\n1 operation done, 1 unknown: check before repeating refund\\_payment.\n');
    for (const heading of [
      '## Done (1)',
      '## Not done (0)',
      '## Unknown: check before repeating (1)',
      '## Findings (2)',
      '## Timeline (2)',
    ]) {
      expect(lines).toContain(heading);
    }
    expect(md).toContain('## Not done (0)\n\n_None._\n');
    expect(md).toContain('- refund\\_payment on billing-mcp: Refund 15.00 EUR on order 5120\n');
    expect(md.endsWith('\n')).toBe(true);
  });

  it('lists findings by severity, with their kind and records', () => {
    const found = lines.filter((l) => l.startsWith('- **'));
    expect(found).toEqual([
      '- **High**: Unsafe replay. Replayed with another key. Records: `r1`, `r2`.',
      '- **Medium**: Unbounded retry. Tried 5 times. Records: `r3`.',
    ]);
  });

  it('keeps the timeline in the order given (the builder orders it), one row per entry, four cells each', () => {
    const start = lines.indexOf('| Time (UTC) | Kind | What | Detail |');
    expect(lines[start + 1]).toBe('| --- | --- | --- | --- |');
    const rows = lines.slice(start + 2).filter((l) => l.startsWith('|'));
    expect(rows).toHaveLength(2);
    expect(rows.map(cells)).toEqual([
      ['2026-11-30 12:00:00.000', 'Outcome', 'refund\\_payment: unknown (connection lost)', ''],
      [
        '2026-11-30 12:00:04.250',
        'Outcome',
        'refund\\_payment completed',
        'x \\| y \\| --- \\| \\<img src=x onerror=alert(1)\\> \\[a\\](http\\://evil.example)',
      ],
    ]);
  });

  it('lets no hostile text open HTML or a link, or add a line', () => {
    const evil = incidentMarkdown({
      requestRef: 'req\n# pwned <b>',
      summary: { done: [hostile], notDone: ['- [x](http://e.example)'], unknown: [] },
      findings: [finding({ explanation: hostile, recordIds: ['<i>'] })],
      timeline: [
        { at: new Date('2026-11-30T12:00:00Z'), kind: 'outcome', status: hostile, title: hostile, detail: hostile },
      ],
    });
    expect(evil.split('\n')[0]).toBe('# Incident `req # pwned <b>`');
    // Inside a code span nothing is HTML or a link; outside, nothing opens one.
    const outsideCode = evil.replace(/(`+)[^`]*?\1/g, '');
    expect(outsideCode).not.toMatch(/(^|[^\\])[<[]/m);
    expect(evil).not.toMatch(/(^|[^\\])https?:\/\//m);
    expect(evil).not.toContain('\n| --- |\n<');
    const rows = evil
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| Time') && !l.startsWith('| ---'));
    expect(rows).toHaveLength(1);
    expect(cells(rows[0])).toHaveLength(4);
    expect(evil).toContain('\n- \\- \\[x\\](http\\://e.example)\n');
  });

  it('shows identifiers as code spans wherever they occur, as typed (request reference, keys, ids)', () => {
    const out = incidentMarkdown({
      requestRef: 'req_8f2c_77',
      summary: {
        done: [],
        notDone: [],
        unknown: [
          'refund_payment on billing-mcp (timeout; key refund_4411_v1): it may have taken effect; check before repeating',
        ],
      },
      findings: [finding({ explanation: 'Replayed refund_4411_v1 under a new key.', recordIds: ['rec_1'] })],
      timeline: [
        { at: new Date('2026-11-30T12:00:00Z'), kind: 'outcome', title: 'evt_a|b', detail: 'key refund_4411_v1' },
      ],
      identifiers: ['refund_4411_v1', 'evt_a|b', 'rec_1'],
    });
    expect(out).toContain(
      '\n- refund\\_payment on billing-mcp (timeout; key `refund_4411_v1`): it may have taken effect; check before repeating\n',
    );
    expect(out).toContain('Replayed `refund_4411_v1` under a new key. Records: `rec_1`.');
    expect(out).toContain('| `evt_a\\|b` | key `refund_4411_v1` |');
  });

  it.each([
    ['plain', 'req_1', '`req_1`'],
    ['a backtick inside', 'a`b', '``a`b``'],
    ['starting with a backtick', '`ab', '`` `ab ``'],
    ['a line break', 'a\nb', '`a b`'],
    ['a pipe', 'a|b', '`a\\|b`'],
  ])('codeSpan: %s', (_, id, expected) => {
    expect(codeSpan(id)).toBe(expected);
  });

  it('shows an invalid date as a dash, and never reorders what it was given', () => {
    const out = incidentMarkdown({
      ...report,
      timeline: [
        { at: new Date('2026-11-30T12:00:01Z'), kind: 'decision', status: 'approve', title: 'approved' },
        { at: new Date('nope'), kind: 'outcome', title: 'undated' },
        // A grant issued by the database a few milliseconds "before" the decision the app stamped.
        { at: new Date('2026-11-30T12:00:00.998Z'), kind: 'grant_issued', title: 'issued' },
      ],
    });
    const rows = out.split('\n').filter((l) => l.startsWith('| 20') || l.startsWith('| —'));
    expect(rows.map((r) => cells(r).slice(0, 2))).toEqual([
      ['2026-11-30 12:00:01.000', 'Decision (approve)'],
      ['—', 'Outcome'],
      ['2026-11-30 12:00:00.998', 'Grant issued'],
    ]);
  });

  it('says when there is nothing to list', () => {
    const out = incidentMarkdown({
      requestRef: 'r',
      summary: { done: [], notDone: [], unknown: [] },
      findings: [],
      timeline: [],
    });
    expect(out).toContain('No operations were recorded.');
    expect(out).toContain('## Findings (0)\n\n_None._\n');
    expect(out).toContain('## Timeline (0)\n\n_None._\n');
  });
});
