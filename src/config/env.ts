/**
 * A frozen copy of the process environment, for features outside the settings files that expand
 * `$VAR` themselves (provisioning). Kept here so that src/config stays the only reader of `process.env`.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

export function environmentSnapshot(): Environment {
  return Object.freeze({ ...process.env });
}
