import { builder } from '../builder.ts';
import { requireOrgRole } from '../context.ts';
import { createApiKey, deleteApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo, type NewApiKey } from '../../services/api-keys.ts';

export const NewApiKeyType = builder.objectRef<NewApiKey>('NewApiKey').implement({
  description: 'A freshly created token. `key` is shown this once; only its hash is stored.',
  fields: (t) => ({ id: t.exposeInt('id'), name: t.exposeString('name'), key: t.exposeString('key') }),
});

const ApiKeyType = builder.objectRef<ApiKeyInfo>('ApiKey').implement({
  description: 'A legacy org API key (its secret is never shown again).',
  fields: (t) => ({
    id: t.exposeInt('id'),
    name: t.exposeString('name'),
    role: t.exposeString('role'),
    expiration: t.string({ nullable: true, resolve: (k) => (k.expiration ? new Date(k.expiration).toISOString() : null) }),
    isRevoked: t.exposeBoolean('isRevoked'),
  }),
});

const ApiKeyMessage = builder.objectRef<{ message: string }>('ApiKeyMessage').implement({
  fields: (t) => ({ message: t.exposeString('message') }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    role: t.string({ required: true, description: '`Viewer`, `Editor` or `Admin` in the caller\'s org.' }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.field({
    type: [ApiKeyType],
    description: 'The caller\'s org\'s legacy API keys. Org Admins only.',
    resolve: (_root, _args, ctx) => listApiKeys(ctx.em, requireOrgRole(ctx, 'Admin', 'apikeys:read').orgId),
  }),
);

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: NewApiKeyType,
    description: 'Creates an org API key for `Authorization: Bearer <key>`. Org Admins only.',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: (_root, { input }, ctx) => createApiKey(ctx.em, requireOrgRole(ctx, 'Admin', 'apikeys:create').orgId, input),
  }),
  deleteApiKey: t.field({
    type: ApiKeyMessage,
    args: { id: t.arg.int({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      await deleteApiKey(ctx.em, requireOrgRole(ctx, 'Admin', 'apikeys:delete').orgId, id);
      return { message: 'API key deleted' };
    },
  }),
  revokeApiKey: t.field({
    type: ApiKeyMessage,
    args: { id: t.arg.int({ required: true }) },
    description: 'Revokes a key or service account token of the org without deleting it.',
    resolve: async (_root, { id }, ctx) => {
      await revokeApiKey(ctx.em, requireOrgRole(ctx, 'Admin', 'apikeys:delete').orgId, id);
      return { message: 'API key revoked' };
    },
  }),
}));
