// The server behind bench:gateway: the demo server's get_order (same store, same answer) on SDK
// v2, over node:http on loopback, in both eras as the SDK serves them (testing/v2-both-eras.ts; a
// 2025 session's answer to a call is an SSE stream of one event). As the demo server does, it refuses a request
// without its bearer token with 401, so the client's Authorization must reach it.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { createDemoStore, DEMO_SERVER_NAME } from '../../scripts/lib/demo-mcp-tools';
import { bothEras } from '../../scripts/lib/v2-both-eras';

export interface V2BenchServer {
  url: URL;
  token: string;
  close(): Promise<void>;
}

export async function startV2BenchServer(): Promise<V2BenchServer> {
  const store = createDemoStore();
  const token = `demo_${randomBytes(16).toString('hex')}`;
  const build = () => {
    const server = new McpServer({ name: DEMO_SERVER_NAME, version: '2.3.0' });
    server.registerTool(
      'get_order',
      {
        title: 'Get order',
        description: 'Reads one order: amount, currency and status. Changes nothing.',
        inputSchema: z.object({ orderId: z.string().regex(/^\d{1,10}$/) }),
        outputSchema: z.object({ orderId: z.string(), amount: z.number(), currency: z.string(), status: z.string() }),
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async ({ orderId }) => {
        const order = store.orders.get(orderId);
        if (!order) return { isError: true, content: [{ type: 'text', text: `No order ${orderId}.` }] };
        return {
          content: [
            {
              type: 'text',
              text: `Order ${orderId}: ${order.amount.toFixed(2)} ${order.currency}, ${order.status}.`,
            },
          ],
          structuredContent: { ...order },
        };
      },
    );
    return server;
  };
  const route = bothEras(build);
  const node = toNodeHandler(route);
  const http = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="demo-billing"' });
      return void res.end('{"error":"unauthorized"}');
    }
    void node(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
    token,
    close: async () => {
      await route.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
