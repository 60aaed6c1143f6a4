// An MCP server on SDK v2 over stdio (both eras; never part of the app) for
// lib/gateway/gateway-catalog.test.ts: one tool, `forecast`, whose description the tool
// `redescribe` changes at run time, announced as MCP says (serveStdio routes the announcement onto
// a 2026-07-28 client's subscription). A test cannot reach into a child process, so the change is
// asked for by a call.
//   npx tsx testing/mcp-catalog-stdio.ts "<description before>" "<description after>"
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { forecastServer } from './mcp-forecast';

const [before, after] = process.argv.slice(2);
let description = before;

const handle = serveStdio(() => {
  const { server, forecast } = forecastServer(description);
  server.registerTool(
    'redescribe',
    { description: 'Gives forecast its other description.', annotations: { readOnlyHint: false } },
    async () => {
      description = after;
      forecast.update({ description });
      server.sendToolListChanged();
      return { content: [{ type: 'text', text: 'redescribed' }] };
    },
  );
  return server;
});
process.on('SIGTERM', () => void handle.close());
