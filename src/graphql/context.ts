import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.ts';
import { hasOrgRole } from '../auth/principal.ts';
import { AUTH_ERRORS } from '../auth/authenticator.ts';
import type { OrgRole } from '../db/entities/index.ts';
import { accessDenied, permissionDenied } from '../services/errors.ts';
import type { Services } from '../services/index.ts';

export interface GraphQLContext {
  /** This request's own EntityManager fork. */
  em: EntityManager;
  principal: Principal | null;
  services: Services;
}

export function signedIn(ctx: GraphQLContext): Principal {
  if (!ctx.principal) throw AUTH_ERRORS.unauthorized();
  return ctx.principal;
}

/** An org role check that reports the missing action as the original server's access control does. */
export function requireOrgRole(ctx: GraphQLContext, role: OrgRole, action: string): Principal {
  const principal = signedIn(ctx);
  if (!hasOrgRole(principal, role)) throw accessDenied(action);
  return principal;
}

/** The server-admin permission, which only users authenticated with Basic credentials can hold. */
export function requireServerAdmin(ctx: GraphQLContext): Principal {
  const principal = signedIn(ctx);
  if (!principal.isServerAdmin || principal.method !== 'basic') throw permissionDenied();
  return principal;
}
