import { Badge } from '@/components/ui/card';
import { schemaLabel } from './schema-label';

type Json = Record<string, unknown>;
type Parameter = { name: string; in: string; required: boolean; description?: string; schema?: Json };
type Media = { schema?: Json; example?: unknown };
export type OperationDoc = {
  operationId: string;
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  parameters: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
};

const methodTone = { get: 'info', post: 'good', put: 'warn', patch: 'warn', delete: 'bad' } as const;

function Code({ value }: { value: unknown }) {
  return (
    <pre className="max-h-96 overflow-auto rounded-md bg-slate-900 p-3 font-mono text-xs text-slate-100">
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

function Schema({ label, schema }: { label: string; schema: unknown }) {
  return (
    <details className="mt-2">
      <summary className="cursor-pointer text-xs font-medium text-slate-600">{label}</summary>
      <Code value={schema} />
    </details>
  );
}

export function OperationCard({ method, path, op }: { method: string; path: string; op: OperationDoc }) {
  const body = op.requestBody?.content ?? {};
  return (
    <article id={op.operationId} className="rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
      <header className="flex flex-wrap items-center gap-3 border-b border-slate-100 px-5 py-3">
        <Badge tone={methodTone[method as keyof typeof methodTone] ?? 'neutral'}>{method.toUpperCase()}</Badge>
        <code className="font-mono text-sm font-semibold text-slate-900">/api/v1{path}</code>
        <span className="text-sm text-slate-600">{op.summary}</span>
      </header>
      <div className="space-y-4 px-5 py-4 text-sm text-slate-700">
        {op.description ? <p className="whitespace-pre-line">{op.description}</p> : null}
        {op.parameters.length ? (
          <table className="w-full text-left text-xs">
            <caption className="sr-only">Parameters</caption>
            <thead className="text-slate-500">
              <tr>
                <th className="py-1 pr-3 font-medium">Parameter</th>
                <th className="py-1 pr-3 font-medium">In</th>
                <th className="py-1 font-medium">Type</th>
              </tr>
            </thead>
            <tbody>
              {op.parameters.map((p) => (
                <tr key={`${p.in}:${p.name}`} className="border-t border-slate-100 align-top">
                  <td className="py-1 pr-3 font-mono">
                    {p.name}
                    {p.required ? <span className="text-red-700"> *</span> : null}
                  </td>
                  <td className="py-1 pr-3">{p.in}</td>
                  <td className="py-1 break-all">
                    {schemaLabel(p.schema)}
                    {p.description ? <span className="text-slate-500"> · {p.description}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {Object.entries(body).map(([type, media]) => (
          <div key={type}>
            <h4 className="text-xs font-semibold text-slate-900">
              Request body <span className="font-mono font-normal text-slate-500">{type}</span>
            </h4>
            {media.example !== undefined ? <Code value={media.example} /> : null}
            {media.schema ? <Schema label="Schema" schema={media.schema} /> : null}
          </div>
        ))}
        <div>
          <h4 className="text-xs font-semibold text-slate-900">Responses</h4>
          <ul className="mt-1 space-y-1">
            {Object.entries(op.responses).map(([status, r]) => (
              <li key={status}>
                <span className="font-mono font-semibold">{status}</span> {r.description}
                {Object.entries(r.content ?? {}).map(([type, media]) =>
                  media.schema ? <Schema key={type} label={type} schema={media.schema} /> : null,
                )}
              </li>
            ))}
          </ul>
        </div>
      </div>
    </article>
  );
}
