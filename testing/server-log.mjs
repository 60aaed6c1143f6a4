// Tests only (playwright.config.ts preloads it into the server): with COUNTERSIGN_SERVER_LOG set,
// everything the process writes to stdout and stderr is also appended to that file, so a test can
// read what the server logged. Playwright's webServer only prints the server's output.
import fs from 'node:fs';

const file = process.env.COUNTERSIGN_SERVER_LOG;
if (file) {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    stream.write = (chunk, encoding, callback) => {
      try {
        fs.appendFileSync(file, chunk, typeof encoding === 'string' ? encoding : undefined);
      } catch {
        // A log copy that cannot be written must not stop the server.
      }
      return write(chunk, encoding, callback);
    };
  }
  process.stdout.write(`[server-log] pid ${process.pid} copies its output to this file\n`);
}
