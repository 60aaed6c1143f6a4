// The least one more hop can cost here: one more process relaying the bytes of each connection
// to the server and back (node:net, no HTTP parsed, nothing looked at). bench:gateway runs it
// beside the bare proxy: what separates the two is the cost of HTTP itself in Node, which no
// gateway that reads the requests it forwards can avoid.
//   node bench/lib/tcp-relay.mjs <upstream URL>   → prints "listening on <URL>" on stderr
import { connect, createServer } from 'node:net';

const upstream = new URL(process.argv[2]);

const server = createServer({ noDelay: true }, (client) => {
  const up = connect({ host: upstream.hostname, port: Number(upstream.port), noDelay: true });
  client.pipe(up).pipe(client);
  client.on('error', () => up.destroy());
  up.on('error', () => client.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`listening on http://127.0.0.1:${server.address().port}${upstream.pathname}, TCP relay\n`);
});
process.on('SIGTERM', () => process.exit(0));
