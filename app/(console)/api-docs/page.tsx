import { Card, PageHeader } from '@/components/ui/card';
import { openApiDocument } from '@/lib/openapi/document';
import { requireViewer } from '@/lib/server/http/session';
import { OperationCard, type OperationDoc } from './operation';

export const metadata = { title: 'API reference' };

type Doc = {
  info: { description: string };
  tags: { name: string }[];
  paths: Record<string, Record<string, OperationDoc & { tags: string[] }>>;
  components: { securitySchemes: Record<string, { description: string }> };
};

// The reference rendered here, on the server, from the very document GET /api/v1/openapi.json serves:
// no script and nothing loaded from elsewhere (the console's CSP allows only its own origin).
export default async function ApiDocsPage() {
  await requireViewer();
  const doc = openApiDocument() as unknown as Doc;
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  return (
    <>
      <PageHeader
        title="API reference"
        description={doc.info.description}
        actions={
          <a
            href="/api/v1/openapi.json"
            className="rounded-md bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-700"
          >
            OpenAPI document (JSON)
          </a>
        }
      />
      <div className="space-y-8">
        <Card title="Authentication">
          <dl className="space-y-2 text-sm">
            {Object.entries(doc.components.securitySchemes).map(([name, scheme]) => (
              <div key={name}>
                <dt className="font-mono text-xs font-semibold text-slate-900">{name}</dt>
                <dd className="text-slate-700">{scheme.description}</dd>
              </div>
            ))}
          </dl>
        </Card>
        <nav aria-label="Operations" className="flex flex-wrap gap-2 text-xs">
          {operations.map(({ method, path, op }) => (
            <a key={op.operationId} href={`#${op.operationId}`} className="font-mono text-slate-600 hover:underline">
              {method.toUpperCase()} {path}
            </a>
          ))}
        </nav>
        {doc.tags.map(({ name }) => (
          <section key={name} aria-labelledby={`tag-${name}`} className="space-y-4">
            <h2 id={`tag-${name}`} className="text-base font-semibold text-slate-900">
              {name}
            </h2>
            {operations
              .filter(({ op }) => op.tags.includes(name))
              .map(({ method, path, op }) => (
                <OperationCard key={op.operationId} method={method} path={path} op={op} />
              ))}
          </section>
        ))}
      </div>
    </>
  );
}
