// What the agent package (`npm run pack:mcp`) leaves to npm instead of bundling: its peers' SDKs
// and zod, installed beside it. bench:gateway bundles the gateway the same way, to measure it as shipped.
export const PACKAGE_EXTERNALS = [
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  'zod',
];
