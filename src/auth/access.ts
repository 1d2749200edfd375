import { accessDenied, AUTH_ERRORS, CallerRefusal, permissionDenied, type DomainError } from '../errors/domain.ts';
import { MESSAGES } from '../errors/messages.ts';
import { roleAtLeast, type BasicRole, type HeldRole } from '../roles.ts';
import type { Principal } from './principal.ts';

/**
 * Who may call an endpoint, as the original server's route table writes it on every line
 * (`reqSignedIn`, `reqOrgAdmin`, `reqGrafanaAdmin`, ...). Route rows and GraphQL root fields
 * declare one; `authorize` is the only place that reads it.
 */
export type Access =
  /** No credentials needed, none read. */
  | { readonly kind: 'anonymous' }
  /** Credentials are read when sent, and each root field of the operation enforces its own rule (`/graphql`). */
  | { readonly kind: 'per-field' }
  /** Any valid credentials, whatever the role in the org. */
  | { readonly kind: 'signed-in' }
  /** A person signed in with a password: tokens act for an org, not a user (403 "Endpoint only available for users"). */
  | { readonly kind: 'user' }
  /**
   * At least `role` in the org the request acts in; the 403 names `action` as the original's access
   * control does. With `serverAdmins`, a server admin passes in every org, as the original grants
   * its Grafana Admin role the org and org-user permissions everywhere. `None` admits every member
   * of the org, whatever its role: for actions that grants on one resource (a data source's
   * permissions, a team's membership) can give, which the service then checks.
   */
  | { readonly kind: 'org-role'; readonly role: BasicRole; readonly action: string; readonly serverAdmins?: true }
  /**
   * The server-admin permission. Only users hold it and they authenticate with Basic credentials,
   * so tokens (org-scoped) are refused: the spec's "Basic authentication only" for administration.
   * Without `action` the refusal is the legacy "Permission denied" (the /api/admin routes); with
   * one it is the access-control 403 naming it (/api/users, /api/orgs).
   */
  | { readonly kind: 'server-admin'; readonly action?: string };

export const anonymous: Access = { kind: 'anonymous' };
export const signedIn: Access = { kind: 'signed-in' };
export const perField: Access = { kind: 'per-field' };
export const serverAdmin: Access = { kind: 'server-admin' };
export const signedInUser: Access = { kind: 'user' };
export const orgRole = (role: BasicRole, action: string): Access => ({ kind: 'org-role', role, action });
/**
 * Any member of the org, `None` included: the original's access control lets through whoever
 * holds `action` on some resource (a grant to it or to one of its teams), and the service then
 * decides resource by resource. Someone who is no member of the org is refused.
 */
export const orgMember = (action: string): Access => orgRole('None', action);
/** `orgRole`, or a server admin in any org. */
export const orgRoleOrServerAdmin = (role: BasicRole, action: string): Access => ({ kind: 'org-role', role, action, serverAdmins: true });
/** `serverAdmin`, refused with the access-control 403 that names `action`. */
export const serverAdminFor = (action: string): Access => ({ kind: 'server-admin', action });

/** The server-admin permission, which only users authenticated with Basic credentials can hold. */
export function isServerAdmin(principal: Principal): boolean {
  return principal.isServerAdmin && principal.method === 'basic';
}

/** Null when `principal` may go ahead under `access`, else the error to answer. Pure. */
export function authorize(principal: Principal | null, access: Access): DomainError | null {
  if (access.kind === 'anonymous' || access.kind === 'per-field') return null;
  if (!principal) return AUTH_ERRORS.unauthorized();
  return admits(principal, access, principal.orgRole) ? null : refusal(access);
}

/**
 * Whether `principal`, holding `role` in some org, passes `access` there: the org the request acts
 * in (its principal's own role, as `authorize` checks it) or another (the graph applies a field's
 * rule in the org of the object it is read on). Pure.
 */
export function admits(principal: Principal, access: Access, role: HeldRole): boolean {
  switch (access.kind) {
    case 'anonymous':
    case 'per-field':
    case 'signed-in':
      return true;
    case 'user':
      return principal.kind === 'user' && principal.userId !== null;
    case 'org-role':
      return roleAtLeast(role, access.role) || (access.serverAdmins === true && isServerAdmin(principal));
    case 'server-admin':
      return isServerAdmin(principal);
  }
}

/** The error of a signed-in caller that `access` refuses. */
export function refusal(access: Access): DomainError {
  switch (access.kind) {
    case 'user':
      return new CallerRefusal('FORBIDDEN', MESSAGES.user.onlyUsers);
    case 'org-role':
      return accessDenied(access.action);
    case 'server-admin':
      return access.action ? accessDenied(access.action) : permissionDenied();
    default:
      return permissionDenied();
  }
}

/** Whether two rules are the same (a REST row and the root field it runs must agree). */
export function sameAccess(a: Access, b: Access): boolean {
  if (a.kind === 'org-role' && b.kind === 'org-role') return a.role === b.role && a.action === b.action && a.serverAdmins === b.serverAdmins;
  if (a.kind === 'server-admin' && b.kind === 'server-admin') return a.action === b.action;
  return a.kind === b.kind;
}

/** How a rule reads in the route table, the OpenAPI document and error messages. */
export function describeAccess(access: Access): string {
  switch (access.kind) {
    case 'anonymous':
      return 'anonymous';
    case 'per-field':
      return 'per root field';
    case 'signed-in':
      return 'signed in';
    case 'user':
      return 'signed-in user (no token)';
    case 'org-role':
      if (access.role === 'None') return `org member, any role (${access.action}; the resource's own permissions decide)`;
      return `org ${access.role}${access.serverAdmins ? ' or server admin' : ''} (${access.action})`;
    case 'server-admin':
      return `server admin, Basic credentials${access.action ? ` (${access.action})` : ''}`;
  }
}
