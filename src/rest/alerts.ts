import { computed, object, type Wire } from './wire.ts';

/**
 * `POST /api/admin/pause-all-alerts` answers the original's words for what the graph answers as
 * `paused`: its state (`pending` after unpausing, though `unknown` is stored) and its message.
 */
export const ALERTS_PAUSED: Wire = object({
  state: computed<boolean>('paused', (paused) => (paused ? 'paused' : 'pending'), { type: 'string', description: '`paused` or `pending`.' }),
  message: computed<boolean>('paused', (paused) => (paused ? 'alerts paused' : 'alerts un paused'), { type: 'string', description: '`alerts paused` or `alerts un paused`.' }),
  alertsAffected: computed<number>('alertsAffected', (n) => n, { type: 'integer', format: 'int32', description: 'Alerts whose state was changed.' }),
});
