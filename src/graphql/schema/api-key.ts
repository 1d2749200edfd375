import { builder } from '../builder.ts';
import { mutate, UserErrorType, type Payload } from './payloads.ts';
import { orgRole } from '../../auth/access.ts';
import { createApiKey, deleteApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo, type NewApiKey } from '../../services/api-keys.ts';

export const NewApiKeyType = builder.objectRef<NewApiKey>('NewApiKey').implement({
  description: 'A freshly created token. `key` is shown this once; only its hash is stored.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The token\'s id.' }),
    name: t.exposeString('name', { description: 'The token\'s name, unique in the org.' }),
    key: t.exposeString('key', { description: 'The secret to send as `Authorization: Bearer <key>`.' }),
  }),
});

const ApiKeyType = builder.objectRef<ApiKeyInfo>('ApiKey').implement({
  description: 'A legacy org API key (its secret is never shown again).',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The key\'s id.' }),
    name: t.exposeString('name', { description: 'Unique in the org.' }),
    role: t.exposeString('role', { description: 'The org role the key acts with.' }),
    expiration: t.string({
      nullable: true,
      description: 'When the key stops working (ISO 8601); null when it never expires.',
      resolve: (k) => (k.expiration ? new Date(k.expiration).toISOString() : null),
    }),
    isRevoked: t.exposeBoolean('isRevoked', { description: 'Revoked keys are refused but still listed.' }),
  }),
});

const ApiKeyDeletePayload = builder.objectRef<Payload<{ deletedApiKeyId: number | null }>>('ApiKeyDeletePayload').implement({
  description: 'The id of the API key deleted, or why it was not.',
  fields: (t) => ({
    deletedApiKeyId: t.int({ nullable: true, description: 'The key\'s id (`ApiKey.id`); null when `userErrors` says why not.', resolve: (p) => p.deletedApiKeyId }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const ApiKeyRevokePayload = builder.objectRef<Payload<{ revokedApiKeyId: number | null }>>('ApiKeyRevokePayload').implement({
  description: 'The id of the API key or service account token revoked, or why it was not.',
  fields: (t) => ({
    revokedApiKeyId: t.int({ nullable: true, description: 'The id of the key (`ApiKey.id`) or token (`ServiceAccountToken.databaseId`); null when `userErrors` says why not.', resolve: (p) => p.revokedApiKeyId }),
    userErrors: t.field({ type: [UserErrorType], description: 'Why nothing changed, as REST\'s 4xx answer says; empty on success.', resolve: (p) => p.userErrors }),
  }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  description: 'A new legacy API key of the caller\'s org.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique in the org, up to 190 characters.' }),
    role: t.string({ required: true, description: '`None` (no permission of its own), `Viewer`, `Editor` or `Admin` in the caller\'s org.' }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

builder.queryField('apiKeys', (t) =>
  t.field({
    extensions: { access: orgRole('Admin', 'apikeys:read') },
    type: [ApiKeyType],
    description: 'The caller\'s org\'s legacy API keys, as `GET /api/auth/keys`. Org Admins (apikeys:read).',
    resolve: (_root, _args, ctx) => listApiKeys(ctx.em, ctx.orgId),
  }),
);

builder.mutationFields((t) => ({
  createApiKey: t.field({
    extensions: { access: orgRole('Admin', 'apikeys:create') },
    type: NewApiKeyType,
    description: 'Creates an org API key for `Authorization: Bearer <key>`, as `POST /api/auth/keys`. Org Admins (apikeys:create).',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key.' }) },
    resolve: (_root, { input }, ctx) => createApiKey(ctx.em, ctx.orgId, input),
  }),
  apiKeyDelete: t.field({
    extensions: { access: orgRole('Admin', 'apikeys:delete') },
    type: ApiKeyDeletePayload,
    args: { id: t.arg.int({ required: true, description: 'The key\'s id.' }) },
    description: 'Deletes a legacy API key of the caller\'s org, as `DELETE /api/auth/keys/:id`; it fails from the next request on. Org Admins (apikeys:delete).',
    resolve: (_root, { id }, ctx) => mutate(ctx, () => deleteApiKey(ctx.em, ctx.orgId, id), () => ({ deletedApiKeyId: id }), { deletedApiKeyId: null }),
  }),
  apiKeyRevoke: t.field({
    extensions: { access: orgRole('Admin', 'apikeys:delete') },
    type: ApiKeyRevokePayload,
    args: { id: t.arg.int({ required: true, description: 'The id of the key or service account token.' }) },
    description: 'Revokes a key or service account token of the org without deleting it; it fails from the next request on. Org Admins (apikeys:delete).',
    resolve: (_root, { id }, ctx) => mutate(ctx, () => revokeApiKey(ctx.em, ctx.orgId, id), () => ({ revokedApiKeyId: id }), { revokedApiKeyId: null }),
  }),
}));
