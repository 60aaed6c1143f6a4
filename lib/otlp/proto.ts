// The part of the OTLP trace protocol the console reads (opentelemetry-proto: collector/trace/v1
// trace_service.proto, trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto),
// as a protobufjs descriptor with the upstream field numbers. Every field left out is skipped
// by the decoder as unknown, so it is never read: scopes, events, links, trace state, and the
// nested array and key-value values (kept as opaque bytes: an attribute the mapping uses is a
// scalar). OTLP's enums (SpanKind, StatusCode) are varints, read here as int32.
import protobuf from 'protobufjs/light.js';

export // A fresh object each time: protobufjs takes `features` out of the options it reads.
const present = () => ({ features: { field_presence: 'EXPLICIT' } });

const descriptor = {
  nested: {
    otlp: {
      nested: {
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
        ResourceSpans: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
          },
        },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            status: { type: 'Status', id: 15 },
          },
        },
        Status: { fields: { code: { type: 'int32', id: 3 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        AnyValue: {
          // A oneof upstream; which member is set is itself the value's type, so a false or a 0
          // must count. Declared here as fields with explicit presence instead (the decoder makes
          // each one read off the wire an own property, decode.ts asks which): protobufjs's oneof
          // setter `delete`s the other members from every value it decodes, turning each into a
          // slow dictionary object (40% of the decoding's time, and slower for all that reads it).
          fields: {
            stringValue: { type: 'string', id: 1, options: present() },
            boolValue: { type: 'bool', id: 2, options: present() },
            intValue: { type: 'int64', id: 3, options: present() },
            doubleValue: { type: 'double', id: 4, options: present() },
            arrayValue: { type: 'bytes', id: 5, options: present() },
            kvlistValue: { type: 'bytes', id: 6, options: present() },
            bytesValue: { type: 'bytes', id: 7, options: present() },
          },
        },
        ExportTraceServiceResponse: { fields: { partialSuccess: { type: 'ExportTracePartialSuccess', id: 1 } } },
        ExportTracePartialSuccess: {
          fields: { rejectedSpans: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);
export const ExportTraceServiceRequest = root.lookupType('otlp.ExportTraceServiceRequest');
export const ExportTraceServiceResponse = root.lookupType('otlp.ExportTraceServiceResponse');

/** A 64-bit integer as protobufjs hands it over (a Long when long.js is there, else a number). */
export type Int64 = number | { low: number; high: number; unsigned?: boolean };

// The decoded messages, as far as the descriptor above reads them. Absent fields are defaults.
export type PbAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: Uint8Array;
  kvlistValue?: Uint8Array;
  bytesValue?: Uint8Array;
};
export type PbKeyValue = { key?: string; value?: PbAnyValue };
export type PbSpan = {
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  kind?: number;
  startTimeUnixNano?: Int64;
  endTimeUnixNano?: Int64;
  attributes?: PbKeyValue[];
  status?: { code?: number };
};
export type PbRequest = {
  resourceSpans?: { resource?: { attributes?: PbKeyValue[] }; scopeSpans?: { spans?: PbSpan[] }[] }[];
};
