import { builder, type FieldsOf } from '../builder.ts';
import { MessageType } from './message.ts';
import { orgRole } from '../../auth/access.ts';
import { MESSAGES } from '../../errors/messages.ts';
import {
  createServiceAccount, createServiceAccountToken, deleteServiceAccount, deleteServiceAccountToken, getServiceAccount,
  listServiceAccounts, listServiceAccountTokens, searchServiceAccounts, setServiceAccountDisabled, updateServiceAccount,
  DEFAULT_SEARCH_PAGE_SIZE, type ServiceAccount, type ServiceAccountPage, type ServiceAccountProfile, type ServiceAccountToken,
} from '../../services/service-accounts.ts';
import { NewApiKeyType } from './api-key.ts';

/** The fields a service account shows, but its id: shared by the REST shape and the graph's node. */
export const serviceAccountFields = (t: FieldsOf<ServiceAccount>) => ({
  name: t.exposeString('name', { description: 'Display name.' }),
  login: t.exposeString('login', { description: '`sa-<orgId>-<name>`, lower-cased, spaces as dashes.' }),
  orgId: t.exposeInt('orgId', { description: 'The one org the account belongs to.' }),
  isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled accounts\' tokens are refused.' }),
  role: t.exposeString('role', { description: 'The account\'s org role, which its tokens act with.' }),
  tokens: t.exposeInt('tokens', { description: 'Number of tokens.' }),
});

const ServiceAccountType = builder.objectRef<ServiceAccount>('ServiceAccount').implement({
  description: 'A non-human identity in one org; it authenticates with its tokens.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The account\'s id (a user id).' }),
    ...serviceAccountFields(t),
  }),
});

/** The fields a service account token shows, but its id: shared by the REST shape and the graph's node. */
export const serviceAccountTokenFields = (t: FieldsOf<ServiceAccountToken>) => ({
  name: t.exposeString('name', { description: 'Unique in the org.' }),
  created: t.string({ description: 'When the token was created (ISO 8601).', resolve: (k) => new Date(k.created).toISOString() }),
  lastUsedAt: t.string({
    nullable: true,
    description: 'When the token was last used (ISO 8601, refreshed at most every 5 minutes); null if never.',
    resolve: (k) => (k.lastUsedAt ? new Date(k.lastUsedAt).toISOString() : null),
  }),
  expiration: t.string({
    nullable: true,
    description: 'When the token stops working (ISO 8601); null when it never expires.',
    resolve: (k) => (k.expiration ? new Date(k.expiration).toISOString() : null),
  }),
  secondsUntilExpiration: t.float({ description: 'Seconds left when the token expires within the next 7 days; 0 otherwise (and once expired).', resolve: (k) => k.secondsUntilExpiration }),
  hasExpired: t.exposeBoolean('hasExpired', { description: 'Its expiration has passed: it is refused.' }),
  isRevoked: t.exposeBoolean('isRevoked', { description: 'Revoked tokens are refused but still listed.' }),
});

const ServiceAccountTokenType = builder.objectRef<ServiceAccountToken>('ServiceAccountToken').implement({
  description: 'A token of a service account (its secret is never shown again).',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The token\'s id.' }),
    ...serviceAccountTokenFields(t),
  }),
});

const ServiceAccountProfileType = builder.objectRef<ServiceAccountProfile>('ServiceAccountProfile').implement({
  description: 'A service account as an update answers it.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The account\'s id (a user id).' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    login: t.exposeString('login', { description: 'Set at creation; a rename keeps it.' }),
    orgId: t.exposeInt('orgId', { description: 'The one org the account belongs to.' }),
    isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled accounts\' tokens are refused.' }),
    createdAt: t.string({ description: 'ISO 8601.', resolve: (a) => a.createdAt.toISOString() }),
    updatedAt: t.string({ description: 'ISO 8601.', resolve: (a) => a.updatedAt.toISOString() }),
    role: t.exposeString('role', { description: 'The account\'s org role.' }),
    teams: t.stringList({ description: 'Always empty: there are no teams here.', resolve: () => [] }),
  }),
});

const ServiceAccountUpdate = builder.objectRef<{ account: ServiceAccountProfile }>('ServiceAccountUpdate').implement({
  description: 'Result of updating a service account.',
  fields: (t) => ({
    id: t.int({ description: 'The account\'s id.', resolve: (r) => r.account.id }),
    message: t.string({ description: 'Always `Service account updated`.', resolve: () => MESSAGES.serviceAccount.updated }),
    name: t.string({ description: 'Its name now.', resolve: (r) => r.account.name }),
    serviceaccount: t.field({ type: ServiceAccountProfileType, description: 'The account as stored now.', resolve: (r) => r.account }),
  }),
});

export const UpdateServiceAccountInput = builder.inputType('UpdateServiceAccountInput', {
  description: 'The fields to change; those left out keep their value.',
  fields: (t) => ({
    name: t.string({ required: false, description: 'New display name (the login stays).' }),
    role: t.string({ required: false, description: '`None` (no permission of its own: only what teams and grants give), `Viewer`, `Editor` or `Admin`; not above the caller\'s own role.' }),
    isDisabled: t.boolean({ required: false, description: 'true refuses its tokens on every instance from the next request on.' }),
  }),
});

export const CreateServiceAccountInput = builder.inputType('CreateServiceAccountInput', {
  description: 'A new service account of the caller\'s org.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Display name; unique in the org.' }),
    role: t.string({ required: false, description: '`None` (no permission of its own: only what teams and grants give), `Viewer` (default), `Editor` or `Admin`.' }),
    isDisabled: t.boolean({ required: false, description: 'Create it disabled (its tokens refused).' }),
  }),
});

export const CreateTokenInput = builder.inputType('CreateServiceAccountTokenInput', {
  description: 'A new token of a service account.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique in the org, up to 190 characters.' }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

const ADMIN_ACTION = 'serviceaccounts:write';

const ServiceAccountSearch = builder.objectRef<ServiceAccountPage>('ServiceAccountSearch').implement({
  description: 'One page of the org\'s service accounts that match a search.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'Accounts matching, on every page.' }),
    serviceAccounts: t.field({ type: [ServiceAccountType], description: 'This page\'s accounts, by e-mail then login; empty past the last page.', resolve: (r) => r.serviceAccounts }),
    page: t.exposeInt('page', { description: 'The page, from 1.' }),
    perPage: t.exposeInt('perPage', { description: 'The page size.' }),
  }),
});

builder.queryFields((t) => ({
  serviceAccountSearch: t.field({
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: ServiceAccountSearch,
    description: 'A page of the org\'s service accounts, as `GET /api/serviceaccounts/search` answers it. Org Admins (serviceaccounts:read).',
    args: {
      query: t.arg.string({ required: false, description: 'Matched case-insensitively anywhere in the name, login or e-mail.' }),
      page: t.arg.int({ required: false, description: 'From 1 (the default; below 1 means 1).' }),
      perPage: t.arg.int({ required: false, description: `Page size; absent or 0 or less means ${DEFAULT_SEARCH_PAGE_SIZE}.` }),
      disabled: t.arg.boolean({ required: false, description: 'Only disabled accounts.' }),
      expiredTokens: t.arg.boolean({ required: false, description: 'Only accounts with an expired token.' }),
    },
    resolve: (_root, args, ctx) => searchServiceAccounts(ctx.em, ctx.orgId, args),
  }),
  serviceAccounts: t.field({
    deprecationReason: 'Use `viewer.currentOrganization.serviceAccounts`, a connection.',
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: [ServiceAccountType],
    description: 'The caller\'s org\'s service accounts. Org Admins (serviceaccounts:read).',
    resolve: (_root, _args, ctx) => listServiceAccounts(ctx.em, ctx.orgId),
  }),
  serviceAccount: t.field({
    deprecationReason: 'Use `node(id:)` with a `ServiceAccountNode` id.',
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: ServiceAccountType,
    description: 'One service account of the caller\'s org, as `GET /api/serviceaccounts/:id`. Org Admins (serviceaccounts:read).',
    args: { id: t.arg.int({ required: true, description: 'The account\'s id.' }) },
    resolve: (_root, { id }, ctx) => getServiceAccount(ctx.em, ctx.orgId, id),
  }),
  serviceAccountTokens: t.field({
    deprecationReason: 'Use `tokens` of a `ServiceAccountNode`, a connection.',
    extensions: { access: orgRole('Admin', 'serviceaccounts:read') },
    type: [ServiceAccountTokenType],
    description: 'The tokens of a service account, by name, as `GET /api/serviceaccounts/:id/tokens`. Org Admins (serviceaccounts:read).',
    args: { serviceAccountId: t.arg.int({ required: true, description: 'The account\'s id.' }) },
    resolve: (_root, { serviceAccountId }, ctx) =>
      listServiceAccountTokens(ctx.em, ctx.orgId, serviceAccountId),
  }),
}));

builder.mutationFields((t) => ({
  createServiceAccount: t.field({
    deprecationReason: 'Use `serviceAccountCreate`: its payload carries the node and `userErrors`.',
    extensions: { access: orgRole('Admin', 'serviceaccounts:create') },
    type: ServiceAccountType,
    description: 'Creates a service account in the caller\'s org, as `POST /api/serviceaccounts`. Org Admins (serviceaccounts:create).',
    args: { input: t.arg({ type: CreateServiceAccountInput, required: true, description: 'The account.' }) },
    resolve: (_root, { input }, ctx) => createServiceAccount(ctx.em, ctx.orgId, input),
  }),
  updateServiceAccount: t.field({
    deprecationReason: 'Use `serviceAccountUpdate` with a `ServiceAccountNode` id.',
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: ServiceAccountUpdate,
    args: {
      id: t.arg.int({ required: true, description: 'The account\'s id.' }),
      input: t.arg({ type: UpdateServiceAccountInput, required: true, description: 'What to change.' }),
    },
    description: 'Renames, re-roles, disables or enables a service account (not to a role above the caller\'s own), as `PATCH /api/serviceaccounts/:id`. Org Admins (serviceaccounts:write).',
    resolve: async (_root, { id, input }, ctx) => ({ account: await updateServiceAccount(ctx.em, ctx.orgId, id, input, ctx.caller.orgRole) }),
  }),
  setServiceAccountDisabled: t.field({
    deprecationReason: 'Use `serviceAccountDisable` or `serviceAccountEnable` with a `ServiceAccountNode` id.',
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: ServiceAccountType,
    args: {
      id: t.arg.int({ required: true, description: 'The account\'s id.' }),
      isDisabled: t.arg.boolean({ required: true, description: 'true disables, false enables.' }),
    },
    description: 'Disables (or enables) an account; its tokens fail from the next request on. Org Admins (serviceaccounts:write).',
    resolve: (_root, { id, isDisabled }, ctx) => setServiceAccountDisabled(ctx.em, ctx.orgId, id, isDisabled),
  }),
  deleteServiceAccount: t.field({
    deprecationReason: 'Use `serviceAccountDelete` with a `ServiceAccountNode` id.',
    extensions: { access: orgRole('Admin', 'serviceaccounts:delete') },
    type: MessageType,
    description: 'Deletes a service account with its tokens, as `DELETE /api/serviceaccounts/:id`; they fail from the next request on. Org Admins (serviceaccounts:delete).',
    args: { id: t.arg.int({ required: true, description: 'The account\'s id.' }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteServiceAccount(ctx.em, ctx.orgId, id);
      return { message: MESSAGES.serviceAccount.deleted };
    },
  }),
  createServiceAccountToken: t.field({
    deprecationReason: 'Use `serviceAccountTokenCreate` with a `ServiceAccountNode` id: its payload carries the key, the token\'s node and `userErrors`.',
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: NewApiKeyType,
    args: {
      serviceAccountId: t.arg.int({ required: true, description: 'The account\'s id.' }),
      input: t.arg({ type: CreateTokenInput, required: true, description: 'The token.' }),
    },
    description: 'Creates a `glsa_` token acting as the account, as `POST /api/serviceaccounts/:id/tokens`; the key is shown this once. Org Admins (serviceaccounts:write).',
    resolve: (_root, { serviceAccountId, input }, ctx) =>
      createServiceAccountToken(ctx.em, ctx.orgId, serviceAccountId, input),
  }),
  deleteServiceAccountToken: t.field({
    deprecationReason: 'Use `serviceAccountTokenDelete` with a `ServiceAccountTokenNode` id.',
    extensions: { access: orgRole('Admin', ADMIN_ACTION) },
    type: MessageType,
    description: 'Deletes a token of a service account, as `DELETE /api/serviceaccounts/:id/tokens/:tokenId`; it fails from the next request on. Org Admins (serviceaccounts:write).',
    args: {
      serviceAccountId: t.arg.int({ required: true, description: 'The account\'s id.' }),
      tokenId: t.arg.int({ required: true, description: 'The token\'s id.' }),
    },
    resolve: async (_root, { serviceAccountId, tokenId }, ctx) => {
      await deleteServiceAccountToken(ctx.em, ctx.orgId, serviceAccountId, tokenId);
      return { message: MESSAGES.serviceAccount.tokenDeleted };
    },
  }),
}));
