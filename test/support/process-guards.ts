import vm from 'node:vm';
import { afterAll, beforeAll } from '@jest/globals';

/**
 * Fails a test file when anything in it (tests, servers, pools, timers) produced an unhandled
 * promise rejection or an uncaught exception. The listeners go on the real process: the `process`
 * a test file sees is Jest's copy, on which Node never emits these events. They are added in
 * `beforeAll` because the test runner swaps out the real process's listeners when the run starts.
 */
const realProcess = vm.runInThisContext('process') as NodeJS.Process;

const rejections = new Map<Promise<unknown>, unknown>();
const exceptions: unknown[] = [];
const onRejection = (reason: unknown, promise: Promise<unknown>) => void rejections.set(promise, reason);
// A rejection handled late (a `.catch` attached after a tick) is not a leak.
const onHandled = (promise: Promise<unknown>) => void rejections.delete(promise);
const onException = (error: unknown) => void exceptions.push(error);

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

beforeAll(() => {
  realProcess.on('unhandledRejection', onRejection);
  realProcess.on('rejectionHandled', onHandled);
  realProcess.on('uncaughtException', onException);
});

afterAll(async () => {
  // Let rejections from the last test's pending work surface before judging.
  await new Promise((resolve) => setImmediate(resolve));
  realProcess.off('unhandledRejection', onRejection);
  realProcess.off('rejectionHandled', onHandled);
  realProcess.off('uncaughtException', onException);
  const problems = [
    ...[...rejections.values()].map((reason) => `unhandled rejection: ${describeError(reason)}`),
    ...exceptions.map((error) => `uncaught exception: ${describeError(error)}`),
  ];
  rejections.clear();
  exceptions.length = 0;
  if (problems.length) throw new Error(`This test file left ${problems.length} process-level error(s):\n${problems.join('\n')}`);
});
