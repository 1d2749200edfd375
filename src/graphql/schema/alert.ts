import { builder } from '../builder.ts';
import { requireOrgRole, requireServerAdmin } from '../context.ts';
import { createAlert, listAlerts, pauseAllAlerts, type AlertRow, type PauseResult } from '../../services/alerts.ts';

const AlertType = builder.objectRef<AlertRow>('Alert').implement({
  description: 'A legacy alert rule.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    orgId: t.exposeInt('orgId'),
    dashboardId: t.exposeInt('dashboardId', { nullable: true }),
    panelId: t.exposeInt('panelId'),
    name: t.exposeString('name'),
    state: t.exposeString('state', { description: '`paused` while all alerts are paused; `unknown` until evaluated.' }),
    newStateDate: t.string({ resolve: (a) => new Date(a.newStateDate).toISOString() }),
  }),
});

const PauseResultType = builder.objectRef<PauseResult>('AlertPauseResult').implement({
  description: 'Outcome of pausing or unpausing every alert.',
  fields: (t) => ({
    state: t.exposeString('state', { description: '`paused` or `pending`.' }),
    message: t.exposeString('message'),
    alertsAffected: t.exposeInt('alertsAffected', { description: 'Alerts whose state was changed.' }),
  }),
});

const CreateAlertInput = builder.inputType('CreateAlertInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    dashboardId: t.int({ required: false }),
    panelId: t.int({ required: false }),
  }),
});

builder.queryField('alerts', (t) =>
  t.field({
    type: [AlertType],
    description: 'The caller\'s org\'s alerts.',
    resolve: (_root, _args, ctx) => listAlerts(ctx.em, requireOrgRole(ctx, 'Viewer', 'alert.rules:read').orgId),
  }),
);

builder.mutationFields((t) => ({
  createAlert: t.field({
    type: AlertType,
    args: { input: t.arg({ type: CreateAlertInput, required: true }) },
    description: 'Creates an alert in the caller\'s org; it starts paused while all alerts are paused. Editors and up.',
    resolve: (_root, { input }, ctx) => createAlert(ctx.em, requireOrgRole(ctx, 'Editor', 'alert.rules:create').orgId, input),
  }),
  pauseAllAlerts: t.field({
    type: PauseResultType,
    args: { paused: t.arg.boolean({ required: false, description: 'true pauses every alert, false unpauses them.' }) },
    description: 'Pauses or unpauses every alert on the server. Server admins only (Basic auth).',
    resolve: (_root, { paused }, ctx) => {
      requireServerAdmin(ctx);
      return pauseAllAlerts(ctx.em, Boolean(paused), ctx.services.settings.alerting.enabled);
    },
  }),
}));
