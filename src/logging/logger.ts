import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Anything that might carry a credential is redacted by path, as a second
 * line of defence: code never logs secrets on purpose.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: level === 'critical' ? 'fatal' : level || 'info',
      base: { service: 'dashgate' },
      redact: {
        paths: ['authorization', 'headers.authorization', 'headers.cookie', 'password', '*.password', 'secureJsonData', '*.secureJsonData'],
        censor: '[redacted]',
      },
    },
    destination as never,
  );
}
