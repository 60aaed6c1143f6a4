// OTLP/JSON decoding (docs/api.md "OpenTelemetry in"): a hand-written export request in, the span it
// must become out.
import { expect, it } from 'vitest';
import { decodeJson, type AttrValue } from './decode';

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

it('OTLP/JSON: the spec example shape decodes; arguments are not kept', () => {
  const [s] = decodeJson(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'support-bot' } }] },
          scopeSpans: [
            {
              scope: { name: 'mcp' },
              spans: [
                {
                  traceId: TRACE.toUpperCase(),
                  spanId: SPAN,
                  kind: 3,
                  startTimeUnixNano: String(T0 * 1e6),
                  endTimeUnixNano: (T0 + 812) * 1e6,
                  attributes: [
                    { key: 'jsonrpc.request.id', value: { intValue: '17' } },
                    { key: 'gen_ai.tool.call.arguments', value: { stringValue: 'secret' } },
                    { key: 'x', value: { arrayValue: { values: [] } } },
                  ],
                  status: { code: 'STATUS_CODE_ERROR' },
                },
              ],
            },
          ],
        },
      ],
    }),
  );
  expect(s).toEqual({
    traceId: TRACE,
    spanId: SPAN,
    kind: 3,
    startMs: T0,
    endMs: T0 + 812,
    statusCode: 2,
    attributes: new Map<string, AttrValue>([
      ['jsonrpc.request.id', 17],
      ['x', { other: 'array' }],
    ]),
    resource: new Map([['service.name', 'support-bot']]),
  });
});
