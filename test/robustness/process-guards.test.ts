import { spawnSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
// @ts-expect-error: the Jest configuration is plain JavaScript without declarations
import base from '../../jest.config.js';

const root = new URL('../..', import.meta.url).pathname;

/** Runs Jest on the fixture files with the project's transform and guard, but no database. */
function runFixtures(): { status: number | null; results: Array<{ name: string; status: string; message: string }> } {
  const config = { ...base, rootDir: root, testMatch: ['<rootDir>/test/robustness/fixtures/guard-*.fixture.ts'], globalSetup: undefined, globalTeardown: undefined };
  const run = spawnSync(process.execPath, ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--config', JSON.stringify(config), '--json', '--runInBand'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const report = JSON.parse(run.stdout) as { testResults: Array<{ name: string; status: string; message: string }> };
  return { status: run.status, results: report.testResults };
}

describe('the process guard registered in jest.config.js', () => {
  it('fails a file that leaves an unhandled rejection or an uncaught exception, and only such a file', () => {
    const { status, results } = runFixtures();
    expect(status).not.toBe(0);
    const leaks = results.find((r) => r.name.endsWith('guard-leaks.fixture.ts'))!;
    const clean = results.find((r) => r.name.endsWith('guard-clean.fixture.ts'))!;
    expect(leaks.status).toBe('failed');
    expect(leaks.message).toContain('This test file left 2 process-level error(s)');
    expect(leaks.message).toContain('unhandled rejection: Error: left behind on purpose');
    expect(leaks.message).toContain('uncaught exception: Error: thrown from a timer on purpose');
    expect(clean.status).toBe('passed');
  }, 90_000);
});
