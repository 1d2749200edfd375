import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A start-up failure whose cause is known: the message is one line naming the cause and the
 * setting or command that fixes it, shown to the operator as is.
 */
export class StartupError extends Error {
  /** A short stable name of the cause, for the log line (`disk_full`, `database_port_in_use`...). */
  readonly kind: string;

  constructor(kind: string, message: string) {
    super(message);
    this.name = 'StartupError';
    this.kind = kind;
  }
}

/** Error text on one line (initdb and PostgreSQL write several). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * The real cause of a failed `mkdir -p path`. A recursive mkdir reports ENOENT whatever stopped it
 * (a read-only or full disk, a folder it may not write); creating the first missing folder on its
 * own tells which. Any other error is returned as it is.
 */
export function mkdirCause(error: unknown, path: string): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT') return error;
  let missing = path;
  while (dirname(missing) !== missing && !existsSync(dirname(missing))) missing = dirname(missing);
  try {
    mkdirSync(missing);
  } catch (cause) {
    return cause;
  }
  return error;
}
