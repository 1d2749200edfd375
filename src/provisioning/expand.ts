import type { Environment } from '../config/env.ts';

const REFERENCE = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/**
 * The original server's interpolation of provisioning values: `$VAR` and `${VAR}` take the
 * variable's value (empty when unset) and `$$` is a literal `$`. Applied to values after YAML
 * parsing, so a variable's content can never change the document's structure.
 */
export function expandEnv(text: string, env: Environment): string {
  if (!text.includes('$')) return text;
  return text.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => {
    if (whole === '$$') return '$';
    return env[braced ?? bare ?? ''] ?? '';
  });
}
