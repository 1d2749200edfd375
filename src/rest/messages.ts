import { constant, object, type JsonSchema, type Wire } from './wire.ts';

/**
 * The original's answer to most changes: `{"message": "..."}`, the words its clients match on. The
 * graph answers a payload instead (the object as changed, or its user errors).
 */
export const MESSAGE_SCHEMA: JsonSchema = { type: 'string', description: 'What was done, e.g. `User deleted` or `API key revoked`.' };

/** `{"message": ...}` with the message `value` gives. */
export const messageOf = (value: Wire): Wire => object({ message: value });

/** `{"message": text}`. */
export const message = (text: string): Wire => messageOf(constant(text, MESSAGE_SCHEMA));
