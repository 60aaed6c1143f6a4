// `npm run -s pack:mcp`: builds @countersign/mcp (docs/api.md, "The agent package") — the wrapper
// `withCountersign`, the reporter, the retry helper, the shared classifier and types, and the
// `countersign-gateway` bin — as a tarball, and prints its path as the last line. The code is
// bundled (nothing from this repository is needed); the packages of PACKAGE_EXTERNALS are left to
// npm, and the package declares exactly those its two bundles import (read from esbuild's
// metafile), at the repository's versions: what stops being imported stops being a dependency.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { build, type Metafile } from 'esbuild';
import { GATEWAY_NODE_FLAGS } from '../lib/gateway/node-flags';
import { dependenciesOf, PACKAGE_EXTERNALS } from './lib/package-externals';

const root = path.resolve(import.meta.dirname, '..');
const repo = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};
const external = PACKAGE_EXTERNALS;

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), 'countersign-mcp-pack-'));
  const pkg = path.join(work, 'package');
  mkdirSync(path.join(pkg, 'dist'), { recursive: true });
  const common = {
    bundle: true,
    platform: 'node' as const,
    format: 'esm' as const,
    target: 'node20',
    external: external.flatMap((e) => [e, `${e}/*`]),
    logLevel: 'warning' as const,
    legalComments: 'none' as const,
    metafile: true as const,
  };
  const wrapper = await build({
    ...common,
    entryPoints: [path.join(root, 'lib/mcp/index.ts')],
    outfile: path.join(pkg, 'dist/index.js'),
  });
  const gateway = await build({
    ...common,
    entryPoints: [path.join(root, 'scripts/gateway.ts')],
    outfile: path.join(pkg, 'dist/gateway.js'),
    // env -S: the flags go to node as their own arguments (GNU coreutils 8.30+, BSD, macOS).
    banner: { js: `#!/usr/bin/env -S node ${GATEWAY_NODE_FLAGS.join(' ')}` },
  });
  const dependencies = dependenciesOf([wrapper.metafile, gateway.metafile].flatMap(externalImports), repo.dependencies);
  writeFileSync(
    path.join(pkg, 'package.json'),
    `${JSON.stringify(
      {
        name: '@countersign/mcp',
        version: repo.version,
        description:
          'Countersign for MCP: the agent-side wrapper, reporter, retry helper, shared classifier, and the gateway',
        type: 'module',
        main: './dist/index.js',
        exports: { '.': './dist/index.js' },
        bin: { 'countersign-gateway': './dist/gateway.js' },
        files: ['dist', 'README.md'],
        engines: { node: '>=20.19' },
        dependencies,
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(
    path.join(pkg, 'README.md'),
    [
      '# @countersign/mcp',
      '',
      '`withCountersign(client, options)` observes, classifies and reports every MCP tool call and makes writes',
      'only with a redeemed grant. `countersign-gateway` puts any MCP host under Countersign by changing one line',
      'of its configuration (stdio: `countersign-gateway --server NAME --principal P --organization O -- COMMAND`;',
      'Streamable HTTP: `--upstream URL`). Environment: `COUNTERSIGN_URL`, `COUNTERSIGN_API_KEY`.',
      '',
    ].join('\n'),
  );
  const out = path.join(tmpdir(), 'countersign-mcp-dist');
  mkdirSync(out, { recursive: true });
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: pkg, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  rmSync(work, { recursive: true, force: true });
  console.log(path.join(out, name));
}

function externalImports(metafile: Metafile): string[] {
  return Object.values(metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
