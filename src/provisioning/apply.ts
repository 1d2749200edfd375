import type { EntityManager } from '@mikro-orm/postgresql';
import { Org } from '../db/entities/index.ts';
import { DomainError } from '../errors/domain.ts';
import type { DataSourceService } from '../services/data-sources.ts';
import { ProvisioningError, where, type DataSourcePlan } from './datasources.ts';

export interface ProvisioningSummary {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  /** Provisioned with `prune: true` and declared in no file any more. */
  pruned: number;
  /** Declared with a version older than the stored one, so left as they are. */
  outdated: string[];
}

/**
 * Applies a plan in one transaction (all or nothing), in the original's order: prunable data
 * sources no file mentions any more are deleted, then each `deleteDatasources` entry, then the
 * creates and updates. Declared without `editable: true`, a data source is read-only through the API.
 */
export async function applyDataSourceProvisioning(em: EntityManager, dataSources: DataSourceService, plan: DataSourcePlan): Promise<ProvisioningSummary> {
  const summary: ProvisioningSummary = { created: 0, updated: 0, unchanged: 0, deleted: 0, pruned: 0, outdated: [] };
  await em.transactional(async (tx) => {
    const mentioned = new Set([...plan.deletions, ...plan.dataSources].map((d) => `${d.orgId}\u0000${d.name}`));
    for (const stale of await dataSources.listPrunable(tx)) {
      if (!mentioned.has(`${stale.orgId}\u0000${stale.name}`) && (await dataSources.deleteProvisioned(tx, stale.orgId, stale.name))) summary.pruned++;
    }
    if (plan.deletions.length === 0 && plan.dataSources.length === 0) return;
    const orgs = new Set((await tx.find(Org, { id: { $in: [...new Set([...plan.deletions, ...plan.dataSources].map((d) => d.orgId))] } })).map((o) => o.id));
    for (const item of [...plan.deletions, ...plan.dataSources]) {
      if (!orgs.has(item.orgId)) throw new ProvisioningError(item.origin, `data source "${item.name}": organization ${item.orgId} does not exist`);
    }
    for (const deletion of plan.deletions) {
      if (await dataSources.deleteProvisioned(tx, deletion.orgId, deletion.name)) summary.deleted++;
    }
    for (const ds of plan.dataSources) {
      let outcome: Awaited<ReturnType<DataSourceService['provision']>>;
      try {
        outcome = await dataSources.provision(tx, ds.orgId, {
          name: ds.name,
          type: ds.type,
          access: ds.access,
          url: ds.url,
          uid: ds.uid,
          isDefault: ds.isDefault,
          jsonData: ds.jsonData,
          secureJsonData: ds.secureJsonData,
          user: ds.user,
          database: ds.database,
          basicAuth: ds.basicAuth,
          basicAuthUser: ds.basicAuthUser,
          withCredentials: ds.withCredentials,
          version: ds.version,
          password: ds.password,
          basicAuthPassword: ds.basicAuthPassword,
          readOnly: !ds.editable,
          isPrunable: ds.prunable,
        });
      } catch (error) {
        if (error instanceof DomainError) throw new ProvisioningError(ds.origin, `data source "${ds.name}": ${error.message}`);
        throw error;
      }
      if (outcome === 'outdated') summary.outdated.push(`${where(ds.origin)}: data source "${ds.name}" declares version ${ds.version}, older than the stored one; left unchanged`);
      else summary[outcome]++;
    }
  });
  return summary;
}
