import { orgMember } from '../../../auth/access.ts';
import type { DataSourceHealth } from '../../../query/health.ts';
import { orgActors } from '../../access.ts';
import { builder } from '../../builder.ts';
import { DataSourceType } from './node.ts';

/** Who may check a data source: whoever may query it (datasources:query; its permissions then require Query). */
export const DATA_SOURCE_QUERY = orgMember('datasources:query');

const HealthStatusEnum = builder.enumType('DataSourceHealthStatus', {
  description: 'Outcome of a data source health check.',
  values: {
    OK: { description: 'The data source answered its kind\'s check as expected.' },
    ERROR: { description: 'The check failed: refused, timed out, the store said no, or its answer was wrong.' },
    UNKNOWN: { description: 'This kind has no check over HTTP (SQL databases, cloud APIs, unknown kinds).' },
  },
});

export const DataSourceHealthType = builder.objectRef<DataSourceHealth>('DataSourceHealth').implement({
  description: 'The result of checking a data source; REST answers 200 when the status is OK, 400 otherwise, with the same fields.',
  fields: (t) => ({
    details: t.field({ type: 'JSONObject', nullable: true, description: 'Extra detail some kinds report (Graphite\'s `verboseMessage`).', resolve: (h) => h.details ?? null }),
    message: t.exposeString('message', { description: 'What the check found, in the wording of the original server\'s plugin for this kind.' }),
    status: t.field({ type: HealthStatusEnum, description: 'The outcome: REST answers 200 for `OK`, 400 otherwise.', resolve: (h) => h.status }),
  }),
});

builder.objectField(DataSourceType, 'health', (t) => t.field({
  type: DataSourceHealthType,
  description: 'Runs its health check now: its kind\'s own probe, sent through the data source proxy (its egress policy, the data source\'s credentials and headers, its timeout), '
    + 'as `GET /api/datasources/uid/:uid/health`. Whoever may query it (datasources:query).',
  extensions: { access: DATA_SOURCE_QUERY },
  resolve: async (ds, _args, ctx) => {
    // As the caller is in the data source's org (its role there), for the data source's permissions.
    if (ds.orgId === ctx.orgId) return ctx.services.dataSourceHealth.check(ctx.dataSourceCaller(), { id: ds.databaseId });
    const [caller] = await orgActors(ctx, [ds.orgId]);
    return ctx.services.dataSourceHealth.check(ctx.dataSourceCaller(caller), { id: ds.databaseId });
  },
}));
