import type { EntityManager } from '@mikro-orm/postgresql';
import { Alert } from '../db/entities/index.ts';
import { badRequest, notFound } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { assertStorableText, MAX_NAME_LENGTH } from './users.ts';

export type AlertRow = InstanceType<typeof Alert.class>;

export interface PauseResult {
  paused: boolean;
  alertsAffected: number;
}

/**
 * Pauses or unpauses every alert with one UPDATE and records the switch in the same transaction,
 * so alerts created while paused start paused. Unpausing stores `unknown` (REST answers `pending`,
 * as the original server does).
 */
export async function pauseAllAlerts(em: EntityManager, paused: boolean, alertingEnabled: boolean): Promise<PauseResult> {
  if (!alertingEnabled) throw badRequest(MESSAGES.alert.legacyDisabled);
  const affected = await em.transactional(async (tx) => {
    // Lock the switch first: a concurrent createAlert then sees the new state or is seen by the UPDATE.
    await tx.execute('update alert_pause_state set paused = ?, updated = now() where id = 1', [paused]);
    const result = await tx.execute<{ affectedRows: number }>(
      'update alert set state = ?, new_state_date = now()',
      [paused ? 'paused' : 'unknown'],
      'run',
    );
    return result.affectedRows;
  });
  return { paused, alertsAffected: affected };
}

export interface CreateAlertInput {
  name: string;
  dashboardId?: number | null;
  panelId?: number | null;
}

/** Creates an alert of the org, on one of its dashboards when `dashboardId` is given. */
export async function createAlert(em: EntityManager, orgId: number, input: CreateAlertInput): Promise<AlertRow> {
  if (!input.name.trim()) throw badRequest();
  assertStorableText(input.name, 'name', MAX_NAME_LENGTH);
  const panelId = input.panelId ?? 0;
  if (panelId < 0) throw badRequest(MESSAGES.alert.negativePanelId);
  return em.transactional(async (tx) => {
    if (input.dashboardId != null) {
      // Another org's dashboard is as unknown as a missing one; the key-share lock keeps it from
      // being deleted before this insert commits.
      const found = await tx.execute('select 1 from dashboard where id = ? and org_id = ? for key share', [input.dashboardId, orgId]);
      if (!found.length) throw notFound(MESSAGES.alert.dashboardNotFound);
    }
    // Share-lock the switch so a pause running now either covers this alert or is seen by it.
    const [state] = await tx.execute<{ paused: boolean }[]>('select paused from alert_pause_state where id = 1 for share');
    const alert = tx.create(Alert, {
      orgId,
      name: input.name,
      dashboardId: input.dashboardId ?? null,
      panelId,
      state: state?.paused ? 'paused' : 'unknown',
    });
    await tx.flush();
    return alert;
  });
}

export function listAlerts(em: EntityManager, orgId: number): Promise<AlertRow[]> {
  return em.find(Alert, { orgId }, { orderBy: { id: 'asc' } });
}
