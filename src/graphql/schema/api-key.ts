import { builder } from '../builder.ts';
import { requireOrgRole } from '../context.ts';
import { createApiKey, type NewApiKey } from '../../services/api-keys.ts';

const NewApiKeyType = builder.objectRef<NewApiKey>('NewApiKey').implement({
  description: 'A freshly created token. `key` is shown this once; only its hash is stored.',
  fields: (t) => ({ id: t.exposeInt('id'), name: t.exposeString('name'), key: t.exposeString('key') }),
});

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    role: t.string({ required: true, description: '`Viewer`, `Editor` or `Admin` in the caller\'s org.' }),
    secondsToLive: t.int({ required: false, description: 'Lifetime; 0 or absent never expires.' }),
  }),
});

builder.mutationField('createApiKey', (t) =>
  t.field({
    type: NewApiKeyType,
    description: 'Creates an org API key for `Authorization: Bearer <key>`. Org Admins only.',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true }) },
    resolve: (_root, { input }, ctx) => createApiKey(ctx.em, requireOrgRole(ctx, 'Admin', 'apikeys:create').orgId, input),
  }),
);
