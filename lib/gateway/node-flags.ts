// The Node.js flags the gateway runs with, however it is started: the package's
// `countersign-gateway` bin (its #! line, scripts/pack-mcp.ts), `npm run gateway` (package.json)
// and bench:gateway. Node.js 24 lets V8's young generation grow with the allocation rate until the
// heap it keeps is far larger than the live objects (bench:gateway prints both over a long run);
// a gateway runs beside every host, so it keeps the young generation at the size Node.js 20 gave it.
export const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=16'] as const;
