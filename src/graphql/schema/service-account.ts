import { builder } from '../builder.ts';
import { requireOrgRole } from '../context.ts';
import {
  createServiceAccount, createServiceAccountToken, deleteServiceAccount, deleteServiceAccountToken, getServiceAccount,
  listServiceAccounts, listServiceAccountTokens, setServiceAccountDisabled, type ServiceAccount, type ServiceAccountToken,
} from '../../services/service-accounts.ts';
import { NewApiKeyType } from './api-key.ts';

const ServiceAccountType = builder.objectRef<ServiceAccount>('ServiceAccount').implement({
  description: 'A non-human identity in one org; it authenticates with its tokens.',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    login: t.exposeString('login'),
    orgId: t.exposeInt('orgId'),
    isDisabled: t.exposeBoolean('isDisabled', { description: 'Disabled accounts\' tokens are refused.' }),
    role: t.exposeString('role'),
    tokens: t.exposeInt('tokens', { description: 'Number of tokens.' }),
  }),
});

const ServiceAccountTokenType = builder.objectRef<ServiceAccountToken>('ServiceAccountToken').implement({
  description: 'A token of a service account (its secret is never shown again).',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    expiration: t.string({ nullable: true, resolve: (k) => (k.expiration ? new Date(k.expiration).toISOString() : null) }),
    isRevoked: t.exposeBoolean('isRevoked'),
    lastUsedAt: t.string({ nullable: true, resolve: (k) => (k.lastUsedAt ? new Date(k.lastUsedAt).toISOString() : null) }),
  }),
});

const Deleted = builder.objectRef<{ message: string }>('DeletionMessage').implement({
  fields: (t) => ({ message: t.exposeString('message') }),
});

const CreateServiceAccountInput = builder.inputType('CreateServiceAccountInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    role: t.string({ required: false, description: '`Viewer` (default), `Editor` or `Admin`.' }),
    isDisabled: t.boolean({ required: false }),
  }),
});

const CreateTokenInput = builder.inputType('CreateServiceAccountTokenInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

const ADMIN_ACTION = 'serviceaccounts:write';

const ServiceAccountSearch = builder.objectRef<{ serviceAccounts: ServiceAccount[] }>('ServiceAccountSearch').implement({
  description: 'One page holding every service account of the org.',
  fields: (t) => ({
    totalCount: t.int({ resolve: (r) => r.serviceAccounts.length }),
    serviceAccounts: t.field({ type: [ServiceAccountType], resolve: (r) => r.serviceAccounts }),
    page: t.int({ resolve: () => 1 }),
    perPage: t.int({ resolve: (r) => r.serviceAccounts.length }),
  }),
});

builder.queryFields((t) => ({
  serviceAccountSearch: t.field({
    type: ServiceAccountSearch,
    description: 'The search form of the list, as the REST search endpoint answers it.',
    resolve: async (_root, _args, ctx) => ({ serviceAccounts: await listServiceAccounts(ctx.em, requireOrgRole(ctx, 'Admin', 'serviceaccounts:read').orgId) }),
  }),
  serviceAccounts: t.field({
    type: [ServiceAccountType],
    description: 'The caller\'s org\'s service accounts. Org Admins only.',
    resolve: (_root, _args, ctx) => listServiceAccounts(ctx.em, requireOrgRole(ctx, 'Admin', 'serviceaccounts:read').orgId),
  }),
  serviceAccount: t.field({
    type: ServiceAccountType,
    args: { id: t.arg.int({ required: true }) },
    resolve: (_root, { id }, ctx) => getServiceAccount(ctx.em, requireOrgRole(ctx, 'Admin', 'serviceaccounts:read').orgId, id),
  }),
  serviceAccountTokens: t.field({
    type: [ServiceAccountTokenType],
    args: { serviceAccountId: t.arg.int({ required: true }) },
    resolve: (_root, { serviceAccountId }, ctx) =>
      listServiceAccountTokens(ctx.em, requireOrgRole(ctx, 'Admin', 'serviceaccounts:read').orgId, serviceAccountId),
  }),
}));

builder.mutationFields((t) => ({
  createServiceAccount: t.field({
    type: ServiceAccountType,
    args: { input: t.arg({ type: CreateServiceAccountInput, required: true }) },
    resolve: (_root, { input }, ctx) => createServiceAccount(ctx.em, requireOrgRole(ctx, 'Admin', 'serviceaccounts:create').orgId, input),
  }),
  setServiceAccountDisabled: t.field({
    type: ServiceAccountType,
    args: { id: t.arg.int({ required: true }), isDisabled: t.arg.boolean({ required: true }) },
    description: 'Disables (or enables) an account; its tokens fail from the next request on.',
    resolve: (_root, { id, isDisabled }, ctx) => setServiceAccountDisabled(ctx.em, requireOrgRole(ctx, 'Admin', ADMIN_ACTION).orgId, id, isDisabled),
  }),
  deleteServiceAccount: t.field({
    type: Deleted,
    args: { id: t.arg.int({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteServiceAccount(ctx.em, requireOrgRole(ctx, 'Admin', 'serviceaccounts:delete').orgId, id);
      return { message: 'Service account deleted' };
    },
  }),
  createServiceAccountToken: t.field({
    type: NewApiKeyType,
    args: { serviceAccountId: t.arg.int({ required: true }), input: t.arg({ type: CreateTokenInput, required: true }) },
    description: 'Creates a `glsa_` token; the key is shown this once.',
    resolve: (_root, { serviceAccountId, input }, ctx) =>
      createServiceAccountToken(ctx.em, requireOrgRole(ctx, 'Admin', ADMIN_ACTION).orgId, serviceAccountId, input),
  }),
  deleteServiceAccountToken: t.field({
    type: Deleted,
    args: { serviceAccountId: t.arg.int({ required: true }), tokenId: t.arg.int({ required: true }) },
    resolve: async (_root, { serviceAccountId, tokenId }, ctx) => {
      await deleteServiceAccountToken(ctx.em, requireOrgRole(ctx, 'Admin', ADMIN_ACTION).orgId, serviceAccountId, tokenId);
      return { message: 'Service account token deleted' };
    },
  }),
}));
