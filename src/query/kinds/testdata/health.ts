import { MESSAGES } from '../../../errors/messages.ts';
import { ok, type HealthCheck } from '../health.ts';

/** TestData answers its check without calling anything, as the original's does. */
export const testDataHealth: HealthCheck = () => Promise.resolve(ok(MESSAGES.health.working));
