/**
 * What every expression command is (the type, and `command` to make one from its steps); the
 * commands themselves are read from their models in `commands.ts` and `classic.ts`.
 */
import { drain, type Steps } from '../slices.ts';
import type { Results, SeriesGuard, Value } from './values.ts';

/** An expression command, read from its model: what it needs and how it runs. */
export interface Command {
  readonly type: string;
  /** The refIds it reads, in the order the original lists them. */
  readonly needs: readonly string[];
  /**
   * Its run as steps, stopping between series so that a caller may give the event loop a turn;
   * each series it builds is spent from `guard` first. Throws an Error whose message is the
   * refId's error.
   */
  steps(vars: ReadonlyMap<string, Results>, range: { from: number; to: number }, guard?: SeriesGuard): Steps<Value[]>;
  /** The same run at once. */
  execute(vars: ReadonlyMap<string, Results>, range: { from: number; to: number }): Value[];
}

/** A command from its steps. */
export function command(type: string, needs: readonly string[], steps: Command['steps']): Command {
  return { type, needs, steps, execute: (vars, range) => drain(steps(vars, range)) };
}
