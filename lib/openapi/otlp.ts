// The OTLP/HTTP trace export as the reference documents it (docs/api.md, "OpenTelemetry in"): the JSON
// encoding of OTLP's ExportTraceServiceRequest and ExportTraceServiceResponse, as the
// OpenTelemetry protocol specification defines them. Only what the console reads is named; the
// request is open to the rest of OTLP. The protobuf encoding carries the same message.
import { z } from 'zod';

const anyValue: z.ZodType = z
  .looseObject({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string(), z.number()]).optional(),
    doubleValue: z.number().optional(),
  })
  .meta({ description: 'OTLP AnyValue (arrays, maps and bytes too).' });

const attributes = z.array(z.looseObject({ key: z.string(), value: anyValue }));

const span = z.looseObject({
  traceId: z.string().meta({ description: 'Hex, 32 digits.' }),
  spanId: z.string().meta({ description: 'Hex, 16 digits.' }),
  name: z.string(),
  kind: z.number().int().meta({ description: 'SpanKind: 3 is CLIENT, the only kind recorded.' }),
  startTimeUnixNano: z.union([z.string(), z.number()]),
  endTimeUnixNano: z.union([z.string(), z.number()]),
  attributes: attributes.optional(),
  status: z.looseObject({ code: z.number().int().optional(), message: z.string().optional() }).optional(),
});

export const exportTraceServiceRequestSchema = z
  .looseObject({
    resourceSpans: z.array(
      z.looseObject({
        resource: z.looseObject({ attributes: attributes.optional() }).optional(),
        scopeSpans: z.array(z.looseObject({ spans: z.array(span) })),
      }),
    ),
  })
  .meta({ description: 'OTLP ExportTraceServiceRequest (JSON encoding).' });

export const exportTraceServiceResponseSchema = z
  .looseObject({
    partialSuccess: z
      .looseObject({
        rejectedSpans: z
          .union([z.number().int(), z.string()])
          .optional()
          .meta({ description: 'Spans refused (int64); absent when none was.' }),
        errorMessage: z.string().optional().meta({
          description: 'Why spans were refused or skipped, naming the missing attributes; absent when all were taken.',
        }),
      })
      .optional()
      .meta({ description: 'Empty (`{}`) when every span was stored, as OTLP specifies for full success.' }),
  })
  .meta({ description: 'OTLP ExportTraceServiceResponse, in the request encoding.' });
