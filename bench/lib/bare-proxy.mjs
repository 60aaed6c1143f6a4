// The least any HTTP hop in Node costs here: a reverse proxy that does nothing but pass each
// request and answer on (node:http, keep-alive connections upstream, bodies streamed as they
// come). bench:gateway runs it as its own process beside the gateway, so that the gateway's
// overhead can be read against what one more process and one more hop cost on this machine.
//   node bench/lib/bare-proxy.mjs <upstream URL>   → prints "listening on <URL>" on stderr
import { Agent, createServer, request } from 'node:http';

const upstream = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' });
const hop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host']);

const server = createServer((req, res) => {
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) if (!hop.has(k)) headers[k] = v;
  const up = request(
    { hostname: upstream.hostname, port: upstream.port, path: upstream.pathname, method: req.method, headers, agent },
    (answer) => {
      const back = {};
      for (const [k, v] of Object.entries(answer.headers)) if (!hop.has(k)) back[k] = v;
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    },
  );
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) up.destroy(); // the client went away mid-answer
  });
  req.pipe(up);
});
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${server.address().port}${upstream.pathname}, bare proxy\n`);
});
process.on('SIGTERM', () => process.exit(0));
