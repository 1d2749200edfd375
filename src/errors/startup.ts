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
