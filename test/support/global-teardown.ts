import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const cluster = (globalThis as { __dashgateCluster?: { stop(): Promise<void> } }).__dashgateCluster;
  await cluster?.stop();
  if (process.env.DASHGATE_TEST_ROOT) await rm(process.env.DASHGATE_TEST_ROOT, { recursive: true, force: true });
}
