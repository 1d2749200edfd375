import type { MikroORM } from '@mikro-orm/postgresql';
import type { Environment } from '../config/env.ts';
import { lockAgainstMigrations } from '../db/orm.ts';
import type { Logger } from '../logging/logger.ts';
import type { ProvisioningReloader } from '../runtime.ts';
import type { DataSourceService } from '../services/data-sources.ts';
import { badRequest } from '../errors/domain.ts';
import { applyDataSourceProvisioning } from './apply.ts';
import { ProvisioningError, ProvisioningFolderError, readDataSourceProvisioning } from './datasources.ts';

/**
 * `POST /api/admin/provisioning/datasources/reload`: reads and checks every file first (a bad one
 * answers 400 naming its file:line:column and nothing is written), then applies them in one
 * transaction under the migration lock, so a reload never interleaves with an instance that is
 * starting up (or with another reload). Every instance's proxy cache follows through the data
 * source change notifications, sent on commit.
 */
export function createProvisioningReloader(orm: MikroORM, dataSources: DataSourceService, provisioningDir: string, env: Environment, log: Logger): ProvisioningReloader {
  return {
    async reloadDataSources() {
      try {
        const plan = await readDataSourceProvisioning(provisioningDir, env);
        for (const warning of plan.warnings) log.warn({ component: 'provisioning' }, warning);
        const summary = await orm.em.fork().transactional(async (tx) => {
          await lockAgainstMigrations(tx);
          return applyDataSourceProvisioning(tx, dataSources, plan);
        });
        for (const outdated of summary.outdated) log.warn({ component: 'provisioning' }, outdated);
        const { created, updated, unchanged, deleted, pruned } = summary;
        log.info({ component: 'provisioning', files: plan.files.length, created, updated, unchanged, deleted, pruned }, 'data sources reloaded');
        return { created, updated, unchanged, deleted, pruned };
      } catch (error) {
        if (error instanceof ProvisioningError) {
          log.warn({ component: 'provisioning' }, `data source provisioning reload refused: ${error.message}`);
          throw badRequest(error.message);
        }
        // An unreadable folder or file: say what failed rather than answer 500.
        if (error instanceof ProvisioningFolderError) throw badRequest(error.message);
        throw error;
      }
    },
  };
}
