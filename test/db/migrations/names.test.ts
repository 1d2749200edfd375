import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { MIGRATIONS } from '../../../src/db/migrations/index.ts';
import { MIGRATION_NAMES } from '../../../src/db/migrations/names.ts';

describe('MIGRATION_NAMES', () => {
  it('names every migration file, in the order the migrations run, and each class by its name', async () => {
    const dir = fileURLToPath(new URL('../../../src/db/migrations/', import.meta.url));
    const files = (await readdir(dir)).filter((f) => f.startsWith('Migration')).map((f) => f.replace(/\.ts$/, '')).sort();
    expect(MIGRATION_NAMES).toEqual(files);
    expect(MIGRATIONS.map((m) => m.name)).toEqual(MIGRATION_NAMES);
    expect(MIGRATIONS.map((m) => m.class.name)).toEqual(MIGRATION_NAMES);
  });
});
