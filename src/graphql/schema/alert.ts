import { builder } from '../builder.ts';
import { orgRole, serverAdmin } from '../../auth/access.ts';
import { mutate, UserErrorType, type Payload } from './payloads.ts';
import { createAlert, listAlerts, pauseAllAlerts, type AlertRow } from '../../services/alerts.ts';

const AlertType = builder.objectRef<AlertRow>('Alert').implement({
  description: 'A legacy alert rule.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'Assigned by the server.' }),
    orgId: t.exposeInt('orgId', { description: 'The owning org.' }),
    dashboardId: t.exposeInt('dashboardId', { nullable: true, description: 'The dashboard holding the alert\'s panel, if any.' }),
    panelId: t.exposeInt('panelId', { description: 'The panel of that dashboard; 0 when none.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    state: t.exposeString('state', { description: '`paused` while all alerts are paused; `unknown` until evaluated.' }),
    newStateDate: t.string({ description: 'When the state last changed (ISO 8601).', resolve: (a) => new Date(a.newStateDate).toISOString() }),
  }),
});

const AlertsPausePayload = builder.objectRef<Payload<{ paused: boolean | null; alertsAffected: number | null }>>('AlertsPausePayload').implement({
  description: 'Whether every alert is now paused and how many changed state, or why nothing changed.',
  fields: (t) => ({
    paused: t.boolean({ nullable: true, description: 'true when every alert is now paused (state `paused`), false when they were unpaused (state `unknown` until evaluated); null when `userErrors` says why not.', resolve: (p) => p.paused }),
    alertsAffected: t.int({ nullable: true, description: 'Alerts whose state was changed; null when `userErrors` says why not.', resolve: (p) => p.alertsAffected }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says (legacy alerting turned off); empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const CreateAlertInput = builder.inputType('CreateAlertInput', {
  description: 'A new alert in the caller\'s org.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Display name, up to 255 characters.' }),
    dashboardId: t.int({ required: false, description: 'A dashboard of the caller\'s org.' }),
    panelId: t.int({ required: false, description: 'A panel of that dashboard; defaults to 0.' }),
  }),
});

builder.queryField('alerts', (t) =>
  t.field({
    extensions: { access: orgRole('Viewer', 'alert.rules:read') },
    type: [AlertType],
    description: 'The caller\'s org\'s alerts, oldest first. Org Viewers and up (alert.rules:read).',
    resolve: (_root, _args, ctx) => listAlerts(ctx.em, ctx.orgId),
  }),
);

builder.mutationFields((t) => ({
  createAlert: t.field({
    extensions: { access: orgRole('Editor', 'alert.rules:create') },
    type: AlertType,
    args: { input: t.arg({ type: CreateAlertInput, required: true, description: 'The alert.' }) },
    description: 'Creates an alert in the caller\'s org; it starts paused while all alerts are paused. Org Editors and up (alert.rules:create).',
    resolve: (_root, { input }, ctx) => createAlert(ctx.em, ctx.orgId, input),
  }),
  alertsPause: t.field({
    extensions: { access: serverAdmin },
    type: AlertsPausePayload,
    args: { paused: t.arg.boolean({ required: false, description: 'true pauses every alert, false (or absent) unpauses them.' }) },
    description: 'Pauses or unpauses every alert on the server, as `POST /api/admin/pause-all-alerts`. Server admins only (Basic credentials).',
    resolve: (_root, { paused }, ctx) => mutate(
      ctx, () => pauseAllAlerts(ctx.em, Boolean(paused), ctx.services.settings.alerting.enabled),
      (result) => ({ paused: result.paused, alertsAffected: result.alertsAffected }), { paused: null, alertsAffected: null },
    ),
  }),
}));
