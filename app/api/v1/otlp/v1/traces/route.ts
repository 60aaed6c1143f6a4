// OTLP/HTTP trace export (docs/api.md "OpenTelemetry in"): MCP client spans become outcome records.
import { apiRoute } from '@/lib/server/http/api-route';
import { exportTraces } from './export';

export const POST = apiRoute({ action: 'outcomes.write' }, ({ actor, request }) => exportTraces(actor, request));
