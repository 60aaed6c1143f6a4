// `npm run -s gateway -- …` (docs/gateway.md, "The gateway"): the logic is lib/gateway.
import { configFailure, gatewayConfig, type GatewayConfig } from '../lib/config';
import { runGateway } from '../lib/gateway/run';

async function main() {
  let env: GatewayConfig;
  try {
    env = gatewayConfig();
  } catch (error) {
    const failure = configFailure(error);
    if (!failure) throw error;
    // Exit 2, as for the other things the gateway is started with (its flags, a missing variable).
    process.stderr.write(`countersign-gateway: configuration error: ${failure}\n`);
    process.exit(2);
  }
  const result = await runGateway({ argv: process.argv.slice(2), env });
  if (result.code === 2) {
    process.stderr.write(`countersign-gateway: ${result.message}\n`);
    process.exit(2);
  }
  // A signal stops it as the end of stdin does (stdio mode: the child is stopped first); a second
  // one while it stops changes nothing, since stopping is bounded anyway.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`countersign-gateway: ${signal}: stopping\n`);
    void result.stop().then(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  await result.done;
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`countersign-gateway: ${error instanceof Error ? error.message : 'failed'}\n`);
  process.exit(1);
});
