// Runs once when a Next.js server starts (never during `next build`): the hourly purge of
// outcome records past OUTCOME_RETENTION_DAYS (lib/server/retention/retention.ts), and the webhook
// outbox's worker (lib/server/webhooks/worker.ts), which first declares COUNTERSIGN_WEBHOOK_URL's
// endpoint. A bad configuration value stops the server here, naming the variable; a database that
// is down only costs that hour's purge, and delays deliveries until it answers.
export async function register() {
  const { config, configFailure, nextServer } = await import('@/lib/config');
  const server = nextServer();
  if (server.runtime !== 'nodejs' || server.building) return;
  // The whole configuration first (lib/config): a bad value stops the server here, in one line
  // naming the variable (`npm start` refuses it before it gets this far).
  try {
    config();
  } catch (err) {
    const failure = configFailure(err);
    if (!failure) throw err;
    console.error(`[config] configuration error: ${failure}`);
    process.exit(1);
  }
  const { startRetentionSchedule } = await import('@/lib/server/retention/job');
  startRetentionSchedule();
  // outcome_records' time partitions, created ahead now and hourly (lib/server/outcomes/partitions-job.ts).
  const { startPartitionSchedule } = await import('@/lib/server/outcomes/partitions-job');
  startPartitionSchedule();
  // The overview's counts folded every minute (lib/server/outcomes/stats-job.ts).
  const { startOverviewCountsSchedule } = await import('@/lib/server/outcomes/stats-job');
  startOverviewCountsSchedule();
  const { startWebhookWorker } = await import('@/lib/server/webhooks/worker');
  void startWebhookWorker();
}
