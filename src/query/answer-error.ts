/**
 * An upstream answer the original's parsing refuses, or one this server will not turn into
 * frames (a time past what the wire format holds, a label that is not a string). Its message is
 * written for the client and becomes the refId's error. Anything else a kind throws is a fault
 * of this server: it is logged, and the client gets a fixed message instead of the engine's.
 */
export class AnswerError extends Error {}

/** `JSON.parse` of an upstream answer; invalid JSON is said in a fixed message, not the engine's. */
export function parseAnswerJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new AnswerError('invalid JSON');
  }
}

/** Deepest nesting of an upstream value that is walked or written back (`%v` of a tag, a find result's text). */
export const MAX_VALUE_DEPTH = 64;

/** Throws when `value` nests arrays or objects deeper than `MAX_VALUE_DEPTH`; iterative, so any depth is safe to check. */
export function checkDepth(value: unknown, what: string): void {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_VALUE_DEPTH) throw new AnswerError(`${what} nests deeper than ${MAX_VALUE_DEPTH} levels`);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}

/**
 * Whether `error` is one the JavaScript engine raised (a stack overflow, a property of undefined):
 * a fault of this server, whose message must not reach a client. It is thrown on, to be logged
 * where the request is answered with a fixed message.
 */
export function isEngineError(error: unknown): boolean {
  return error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError
    || error instanceof SyntaxError || error instanceof EvalError || error instanceof URIError;
}

/** The message of an error this server raised on purpose; an engine's error is thrown on instead. */
export function ownMessage(error: unknown): string {
  if (isEngineError(error) || !(error instanceof Error)) throw error;
  return error.message;
}
