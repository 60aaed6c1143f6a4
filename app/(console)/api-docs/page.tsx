import { headers } from 'next/headers';
import { SwaggerReference } from '@/components/api-docs/swagger-reference';
import { PageHeader } from '@/components/ui/card';
import { swaggerAssetUrl } from '@/app/api-docs/assets/files';
import { requireViewer } from '@/lib/server/auth/session';

export const metadata = { title: 'API reference' };

const specUrl = '/api/v1/openapi.json';

// GET /api/v1/openapi.json rendered by swagger-ui (components/api-docs), everything from this origin.
export default async function ApiDocsPage() {
  await requireViewer();
  // This request's script nonce (proxy.ts); the bundle runs only with it.
  const nonce = (await headers()).get('x-nonce') ?? undefined;
  return (
    <>
      <link rel="stylesheet" href={swaggerAssetUrl('swagger-ui.css')} precedence="default" />
      <PageHeader
        title="API reference"
        description="Every operation of /api/v1, its parameters, bodies, answers and errors, as the API serves them."
        actions={
          <a
            href={specUrl}
            className="rounded-md bg-slate-900 px-3 py-2 text-sm font-medium text-white hover:bg-slate-700"
          >
            OpenAPI document (JSON)
          </a>
        }
      />
      <noscript>
        <p className="text-sm text-slate-600">
          The reference needs JavaScript; the document itself is at <a href={specUrl}>{specUrl}</a>.
        </p>
      </noscript>
      <SwaggerReference bundleUrl={swaggerAssetUrl('swagger-ui-bundle.js')} specUrl={specUrl} nonce={nonce} />
    </>
  );
}
