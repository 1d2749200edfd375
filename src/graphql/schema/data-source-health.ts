import { builder } from '../builder.ts';
import { orgMember } from '../../auth/access.ts';
import type { RequestContext } from '../../context.ts';
import { badRequest } from '../../errors/domain.ts';
import { MESSAGES } from '../../errors/messages.ts';
import type { DataSourceHealth } from '../../query/health.ts';

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

/** The original's `util.IsValidShortUID`. */
const SHORT_UID = /^[a-zA-Z0-9\-_]{0,40}$/;

/** As the proxy: every org role may query a data source. */
const QUERY = orgMember('datasources:query');

function check(ctx: RequestContext, ref: { id: number } | { uid: string }) {
  if ('uid' in ref && !SHORT_UID.test(ref.uid)) throw badRequest(MESSAGES.proxy.uidInvalid);
  return ctx.services.dataSourceHealth.check(ctx.dataSourceCaller(), ref);
}

builder.queryFields((t) => ({
  dataSourceHealth: t.field({
    deprecationReason: 'Use `health` of a `DataSourceNode` (`node(id:)`).',
    extensions: { access: QUERY },
    type: DataSourceHealthType,
    description: 'Runs the data source\'s health check: its kind\'s own probe, sent through the data source proxy (its egress policy, the data source\'s credentials and headers, its timeout), as `GET /api/datasources/:id/health`. Org members of any role (`None` included) (datasources:query); the data source\'s permissions then require Query.',
    args: { id: t.arg.int({ required: true, description: 'The data source\'s id.' }) },
    resolve: (_root, { id }, ctx) => check(ctx, { id }),
  }),
  dataSourceHealthByUid: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.dataSource(uid:) { health }`.',
    extensions: { access: QUERY },
    type: DataSourceHealthType,
    description: 'As `dataSourceHealth`, by uid, as `GET /api/datasources/uid/:uid/health`. Org members of any role (`None` included) (datasources:query); the data source\'s permissions then require Query.',
    args: { uid: t.arg.string({ required: true, description: 'The data source\'s uid.' }) },
    resolve: (_root, { uid }, ctx) => check(ctx, { uid }),
  }),
}));
