import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../config/env.ts';
import { ProvisioningError, ProvisioningFolderError, type DataSourcePlan } from './plan.ts';

export { ProvisioningError, ProvisioningFolderError, where, type DataSourcePlan, type Origin, type ProvisionedDataSource, type ProvisionedDeletion } from './plan.ts';

/**
 * Data source provisioning in the original server's format (`apiVersion: 1`): every
 * `<[paths] provisioning>/datasources/*.yaml|yml` lists `datasources` to create or update (by org
 * and name) and `deleteDatasources` to remove; with `prune: true`, its data sources are deleted
 * once no file declares them any more. Files are read and checked completely before the
 * database is touched, and every problem names its file and line. This module only reads (it
 * loads no database code, so start-up can check the files while PostgreSQL starts); apply.ts writes.
 */

const MAX_FILE_BYTES = 1 << 20;

/** Reads and checks every data source file under `<provisioningDir>/datasources`; a missing folder means nothing to do. */
export async function readDataSourceProvisioning(provisioningDir: string, env: Environment): Promise<DataSourcePlan> {
  const dir = join(provisioningDir, 'datasources');
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => e.name).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { files: [], deletions: [], dataSources: [], warnings: [] };
    throw new ProvisioningFolderError(`cannot read provisioning folder ${dir}: ${(error as Error).message}`);
  }

  const plan: DataSourcePlan = { files: [], deletions: [], dataSources: [], warnings: [] };
  if (names.length === 0) return plan;
  // The YAML parser, only when there are files to parse: most installations have none.
  const { checkPlan, parseFile } = await import('./datasource-file.ts');
  for (const name of names) {
    const file = join(dir, name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new ProvisioningFolderError(`cannot read provisioning file ${file}: ${(error as Error).message}`);
    }
    if (text.length > MAX_FILE_BYTES) throw new ProvisioningError({ file, line: 1, col: 1 }, `file larger than ${MAX_FILE_BYTES} bytes`);
    parseFile(file, text, env, plan);
    plan.files.push(file);
  }
  checkPlan(plan);
  return plan;
}

