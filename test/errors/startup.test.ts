import { mkdtemp, rm, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { mkdirCause, oneLine } from '../../src/errors/startup.ts';

describe('oneLine', () => {
  it('joins the lines initdb and PostgreSQL write', () => {
    expect(oneLine('  initdb: error:\n   could not create directory \r\n "x": Permission denied\n')).toBe('initdb: error: could not create directory "x": Permission denied');
  });
});

describe('mkdirCause', () => {
  it('tells what stopped a recursive mkdir that reports ENOENT', async () => {
    const root = await mkdtemp(join(tmpdir(), 'dashgate-mkdir-'));
    try {
      const locked = join(root, 'locked');
      await mkdir(locked);
      await chmod(locked, 0o500);
      const path = join(locked, 'a', 'b');
      const enoent = Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      const cause = mkdirCause(enoent, path) as NodeJS.ErrnoException;
      // As root the folder is writable after all: then the error stays what it was.
      if (process.getuid?.() === 0) expect(cause).toBe(enoent);
      else expect([cause.code, cause.path]).toEqual(['EACCES', join(locked, 'a')]);
    } finally {
      await chmod(join(root, 'locked'), 0o700);
      await rm(root, { recursive: true, force: true });
    }
  });

  it('returns any other error as it is', () => {
    const other = Object.assign(new Error('full'), { code: 'ENOSPC' });
    expect(mkdirCause(other, '/x')).toBe(other);
  });
});
