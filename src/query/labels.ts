import { AnswerError } from './answer-error.ts';
import { goQuote } from './go-text.ts';

/**
 * Labels read from upstream answers. Maps without a prototype, so every key is a label the
 * upstream sent (`__proto__` too) and none is one JavaScript adds (`constructor`). Pure.
 */

export type Labels = Record<string, string>;

/** An empty label map without a prototype. */
export const noLabels = (): Labels => Object.create(null) as Labels;

/**
 * A label object as Go decodes `map[string]string`: string values, `null` read as "", absent or
 * `null` labels as none; a value of any other type fails the answer, as it fails the original's decode.
 */
export function readLabels(raw: unknown, what: string): Labels {
  const out = noLabels();
  if (raw === undefined || raw === null) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new AnswerError(`${what} are not an object`);
  for (const key of Object.keys(raw)) {
    const value = (raw as Record<string, unknown>)[key];
    if (value !== null && typeof value !== 'string') throw new AnswerError(`${what}: the value of ${goQuote(key)} is not a string`);
    out[key] = value ?? '';
  }
  return out;
}

/** The label's value when the map has it as its own key (never an inherited property). */
export function ownLabel(labels: Readonly<Labels>, name: string): string | undefined {
  return Object.hasOwn(labels, name) ? labels[name] : undefined;
}
