import { builder } from '../../builder.ts';
import { MESSAGES } from '../../../errors/messages.ts';
import { serverAdmin } from '../../../auth/access.ts';
import { createUser } from '../../../services/users.ts';

const CreatedUser = builder.objectRef<{ id: number; message: string }>('CreatedUser').implement({
  description: 'The id of a user just created.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'The new user\'s id.' }),
    message: t.exposeString('message', { description: 'Always `User created`.' }),
  }),
});

const AdminCreateUserInput = builder.inputType('AdminCreateUserInput', {
  description: 'A new global user. Either `login` or `email` is needed; the login defaults to the e-mail.',
  fields: (t) => ({
    name: t.string({ required: false, description: 'Display name.' }),
    email: t.string({ required: false, description: 'E-mail address; defaults to the login. Unique, case-insensitively.' }),
    login: t.string({ required: false, description: 'Login name (trimmed). Unique, case-insensitively, also against e-mails.' }),
    password: t.string({ required: true, description: 'At least 4 characters; stored only as an argon2id hash.' }),
    orgId: t.int({ required: false, description: 'The org to join; defaults to `[users] auto_assign_org_id`.' }),
  }),
});

builder.mutationFields((t) => ({
  adminCreateUser: t.field({
    deprecationReason: 'Use `userCreate`: its payload carries the node and `userErrors`.',
    extensions: { access: serverAdmin },
    type: CreatedUser,
    args: { input: t.arg({ type: AdminCreateUserInput, required: true, description: 'The user.' }) },
    description: 'Creates a global user in the default (or given) org with the auto-assign role, as `POST /api/admin/users`. Server admins only (Basic credentials).',
    resolve: async (_root, { input }, ctx) => {
      const user = await createUser(ctx.em, input, ctx.services.settings.users);
      return { id: user.id, message: MESSAGES.user.created };
    },
  }),
}));
