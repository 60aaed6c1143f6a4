// The message of a partial success (docs/api.md "OpenTelemetry in"): rejected spans grouped by reason.
import { expect, it } from 'vitest';
import { rejectionMessage } from './response';

it('the message groups reasons', () => {
  expect(
    rejectionMessage(
      [
        { ref: 'a:1', reason: 'missing required attribute countersign.principal' },
        { ref: 'a:2', reason: 'missing required attribute countersign.principal' },
        { ref: 'b:1', reason: 'spanId must be 8 bytes, not all zero' },
      ],
      4,
    ),
  ).toBe(
    '3 spans rejected: missing required attribute countersign.principal (2 spans, e.g. a:1); ' +
      'spanId must be 8 bytes, not all zero (1 span, e.g. b:1). 4 spans skipped: not MCP tools/call client spans',
  );
});
