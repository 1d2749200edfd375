import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logging/logger.ts';
import type { DataSourceService } from '../services/data-sources.ts';
import { applyDataSourceProvisioning } from './apply.ts';
import type { DataSourcePlan } from './datasources.ts';

export { readDataSourceProvisioning, ProvisioningError, ProvisioningFolderError, type DataSourcePlan } from './datasources.ts';
export { applyDataSourceProvisioning } from './apply.ts';
export { createProvisioningReloader } from './reload.ts';

/**
 * Start-up step (run under the migration lock, so instances starting together apply it one at a
 * time and the later ones find nothing to change): applies the plan and reports what it did.
 */
export async function applyProvisioning(em: EntityManager, dataSources: DataSourceService, plan: DataSourcePlan, log: Logger): Promise<void> {
  for (const warning of plan.warnings) log.warn({ component: 'provisioning' }, warning);
  // Even without files, data sources provisioned with `prune: true` may be left to delete.
  const summary = await applyDataSourceProvisioning(em, dataSources, plan);
  for (const outdated of summary.outdated) log.warn({ component: 'provisioning' }, outdated);
  const { created, updated, unchanged, deleted, pruned } = summary;
  if (plan.files.length === 0 && pruned === 0) return;
  log.info({ component: 'provisioning', files: plan.files.length, created, updated, unchanged, deleted, pruned, outdated: summary.outdated.length }, 'data sources provisioned');
}
