import { defineEntity, p } from '@mikro-orm/postgresql';

export const Org = defineEntity({
  name: 'Org',
  tableName: 'org',
  properties: {
    id: p.integer().primary().autoincrement(),
    name: p.string().unique(),
    created: p.datetime().onCreate(() => new Date()),
    updated: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

import type { BasicRole } from '../../roles.ts';

export { ORG_ROLES, type OrgRole } from '../../roles.ts';

/** A user's membership of an org with its basic role there (`None` included). */
export const OrgUser = defineEntity({
  name: 'OrgUser',
  tableName: 'org_user',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    userId: p.integer(),
    role: p.string().$type<BasicRole>(),
    created: p.datetime().onCreate(() => new Date()),
  },
});
