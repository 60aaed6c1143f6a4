// A webhook worker in a process of its own, for the crash test (lib/server/webhooks/crash.test.ts):
// `tsx --conditions=react-server testing/webhook-worker-child.ts` with DATABASE_URL and AUTH_SECRET.
// Prints "ready" once started; the test kills it with SIGKILL whenever it likes.
import { createWebhookWorker } from '@/lib/server/webhooks/worker';
import { fastWorker } from './webhooks-fixtures';

const leaseMs = Number(process.env.WORKER_LEASE_MS) || fastWorker.leaseMs;
const worker = createWebhookWorker({ ...fastWorker, leaseMs, timeoutMs: leaseMs - 200 });
worker.start();
console.log('ready');
