/** Milliseconds per unit of a period. */
const PERIOD_UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * A period as the original's refresh pickers and `[live] min_refresh` write it: one or more
 * `<number><unit>` parts (`500ms`, `5s`, `1m30s`, `1h`; units ms s m h d w). Null when not one.
 */
export function parsePeriod(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d|w))+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, amount, , unit] of trimmed.matchAll(/(\d+(\.\d+)?)(ms|s|m|h|d|w)/g)) total += Number(amount) * PERIOD_UNIT_MS[unit!]!;
  const ms = Math.round(total);
  return ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}

