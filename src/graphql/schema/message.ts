import { builder } from '../builder.ts';

/** The answer of a change whose only result is a confirmation (the original's `{"message"}` bodies). */
export const MessageType = builder.objectRef<{ message: string }>('Message').implement({
  description: 'A confirmation of a change.',
  fields: (t) => ({ message: t.exposeString('message', { description: 'What was done, e.g. `User deleted` or `API key revoked`.' }) }),
});
