import { defineEntity, p } from '@mikro-orm/postgresql';

export const Dashboard = defineEntity({
  name: 'Dashboard',
  tableName: 'dashboard',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    uid: p.string(),
    title: p.string(),
    isFolder: p.boolean().default(false),
    data: p.json<Record<string, unknown>>(),
    created: p.datetime().onCreate(() => new Date()),
    updated: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const DashboardTag = defineEntity({
  name: 'DashboardTag',
  tableName: 'dashboard_tag',
  properties: {
    id: p.integer().primary().autoincrement(),
    dashboardId: p.integer(),
    term: p.string(),
  },
});

export const DashboardSnapshot = defineEntity({
  name: 'DashboardSnapshot',
  tableName: 'dashboard_snapshot',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    dashboardId: p.integer().nullable(),
    name: p.string(),
    key: p.string().unique(),
    created: p.datetime().onCreate(() => new Date()),
  },
});

export const Playlist = defineEntity({
  name: 'Playlist',
  tableName: 'playlist',
  properties: {
    id: p.integer().primary().autoincrement(),
    orgId: p.integer(),
    name: p.string(),
    interval: p.string().default('5m'),
  },
});

export const Star = defineEntity({
  name: 'Star',
  tableName: 'star',
  properties: {
    id: p.integer().primary().autoincrement(),
    userId: p.integer(),
    dashboardId: p.integer(),
  },
});
