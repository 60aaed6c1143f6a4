// `npm run -s gateway -- …` (docs/gateway.md, "The gateway"): the logic is lib/gateway.
import { runGateway } from '../lib/gateway/run';

async function main() {
  const result = await runGateway({ argv: process.argv.slice(2), env: process.env });
  if (result.code === 2) {
    process.stderr.write(`countersign-gateway: ${result.message}\n`);
    process.exit(2);
  }
  const stop = () => void result.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await result.done;
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`countersign-gateway: ${error instanceof Error ? error.message : 'failed'}\n`);
  process.exit(1);
});
