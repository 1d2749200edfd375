import type { Results, Value } from './values.ts';

/** An expression command, read from its model: what it needs and how it runs. */
export interface Command {
  readonly type: string;
  /** The refIds it reads, in the order the original lists them. */
  readonly needs: readonly string[];
  /** Throws an Error whose message is the refId's error. */
  execute(vars: ReadonlyMap<string, Results>, range: { from: number; to: number }): Value[];
}
