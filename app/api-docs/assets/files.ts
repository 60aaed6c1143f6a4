import { readFile } from 'node:fs/promises';
import path from 'node:path';
import swaggerUi from 'swagger-ui-dist/package.json';

// The only files of swagger-ui-dist the console serves (app/api-docs/assets/[file]/route.ts): the
// renderer of /api-docs and its styles. Nothing else in the package (its index.html, its OAuth
// redirect page, source maps) is readable through the route.
const files = new Map([
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui.css', 'text/css; charset=utf-8'],
] as const);

export type SwaggerAsset = typeof files extends Map<infer K, unknown> ? K : never;

/** The address of one asset; the package's version in it, so an upgrade is a new address. */
export const swaggerAssetUrl = (name: SwaggerAsset) =>
  `/api-docs/assets/${name}?v=${encodeURIComponent(swaggerUi.version)}`;

const loaded = new Map<string, Promise<Buffer>>();

/** The file's bytes and content type, or null for any name outside the list. */
export async function swaggerAsset(name: string): Promise<{ body: Buffer; type: string } | null> {
  const type = files.get(name as SwaggerAsset);
  if (!type) return null;
  let body = loaded.get(name);
  if (!body) {
    body = readFile(path.join(process.cwd(), 'node_modules', 'swagger-ui-dist', name));
    loaded.set(name, body);
    body.catch(() => loaded.delete(name));
  }
  return { body: await body, type };
}
