import { defineEntity, p } from '@mikro-orm/postgresql';

export const Alert = defineEntity({
  name: 'Alert',
  tableName: 'alert',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    dashboardId: p.integer().nullable(),
    panelId: p.integer().default(0),
    name: p.string(),
    state: p.string().default('unknown'),
    newStateDate: p.datetime().onCreate(() => new Date()),
    created: p.datetime().onCreate(() => new Date()),
  },
});

/** The one-row switch set by pause-all-alerts; alerts created while it is on start paused. */
export const AlertPauseState = defineEntity({
  name: 'AlertPauseState',
  tableName: 'alert_pause_state',
  properties: {
    id: p.integer().primary(),
    paused: p.boolean().default(false),
    updated: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
