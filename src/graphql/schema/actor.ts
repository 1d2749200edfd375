import type { RequestContext } from '../../context.ts';
import type { ServiceAccount } from '../../services/service-accounts.ts';
import type { UserProfile } from '../../services/user-profiles.ts';
import { builder } from '../builder.ts';

/**
 * The caller as `viewer` answers it when nothing asked of it needs its row: its id and kind, which
 * the request's principal holds. The usual walk to the org's lists (`viewer { currentOrganization
 * { dataSources } }`) then reads neither the caller's row nor the org's.
 */
export class CallerRef {
  readonly id: number;
  readonly user: boolean;

  constructor(id: number, user: boolean) {
    this.id = id;
    this.user = user;
  }
}

/** Who is calling, as the graph shows it: a user (Basic credentials) or a service account (its token). */
export type Actor = UserProfile | ServiceAccount;
export const isUser = (a: Actor): a is UserProfile => (a instanceof CallerRef ? a.user : 'theme' in a);
/** Declared here, implemented in viewer.ts: `User` and service accounts implement it. */
export const ActorInterface = builder.interfaceRef<Actor>('Actor');

/** Whether `a` is the caller itself (a user's id and a service account's may not be told apart by number alone). */
export function isCaller(ctx: RequestContext, a: Actor): boolean {
  const caller = ctx.caller;
  return caller.userId === a.id && (caller.kind === 'user') === isUser(a);
}
