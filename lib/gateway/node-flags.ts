// The Node.js flags the gateway runs with, however it is started: the package's
// `countersign-gateway` bin (its #! line, scripts/pack-mcp.ts), `npm run gateway` (package.json)
// and bench:gateway. Node.js 24 lets V8's young generation grow with the allocation rate until the
// heap it keeps is some 100 MB over the live objects (bench:gateway: live heap 19–20 MB, kept
// 54 → 152 MB over 200,000 calls); a gateway runs beside every host, so it keeps the young
// generation at the size Node.js 20 gave it.
export const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=16'] as const;
