// What the agent package (`npm run pack:mcp`) leaves to npm instead of bundling, when its code
// imports them: the MCP SDK packages (so the integrator's own SDK classes are the ones the wrapper
// sees; the client's stdio transport also spawns through cross-spawn, CommonJS, which an ESM
// bundle cannot require), zod, and undici (CommonJS too; the gateway's lean path posts with it). The package declares those its bundles import
// (`dependenciesOf`). bench:gateway bundles the gateway the same way, to measure it as shipped.
import { isBuiltin } from 'node:module';

export const PACKAGE_EXTERNALS = ['@modelcontextprotocol/client', '@modelcontextprotocol/server', 'undici', 'zod'];

/**
 * The package's `dependencies`: the packages its bundles import (the external import paths esbuild
 * reports, Node's built-ins aside), each at the version the repository depends on.
 */
export function dependenciesOf(imports: string[], versions: Record<string, string>): Record<string, string> {
  const names = [...new Set(imports.filter((i) => !isBuiltin(i)).map(packageName))].sort();
  const missing = names.filter((n) => !versions[n]);
  if (missing.length) throw new Error(`the bundles import ${missing.join(', ')}, not a dependency of the repository`);
  return Object.fromEntries(names.map((n) => [n, versions[n]]));
}

/** `@scope/name/sub/path.js` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
