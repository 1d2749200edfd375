import { AnswerError } from './answer-error.ts';
import { goQuote } from './go-text.ts';

/**
 * Numbers as the original's Go backends read them from upstream answers: `strconv.ParseFloat`
 * for sample strings, the range of Go's time values, `int64` literals. The kinds' fast paths
 * read plain decimals from their digits; whatever else a value holds comes here, so an answer
 * means the same numbers, and fails on the same values, as it does for the original. Pure.
 */

/** A value the original's parsing refuses; its message is worded as Go's. */
export class GoNumberError extends AnswerError {}

/** How much of a refused value an error message quotes. */
const QUOTED = 64;

function quoted(text: string): string {
  return goQuote(text.length > QUOTED ? `${text.slice(0, QUOTED)}...` : text);
}

const syntaxError = (text: string) => new GoNumberError(`strconv.ParseFloat: parsing ${quoted(text)}: invalid syntax`);
const rangeError = (text: string) => new GoNumberError(`strconv.ParseFloat: parsing ${quoted(text)}: value out of range`);

/** Decimal syntax of Go's float literals: digits, one dot, an exponent; underscores checked apart. */
const DECIMAL = /^[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?$/;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F_]*)\.?([0-9a-fA-F_]*)[pP]([+-]?[0-9_]+)$/;

/**
 * `strconv.ParseFloat(text, 64)`: decimals (`.5`, `5.`, `1e5`, `+5`), hexadecimal with a
 * binary exponent (`0x1.8p1`), underscores between digits, `Inf`/`Infinity`/`NaN` in any case
 * (`NaN` unsigned). Throws Go's syntax error for anything else (empty, spaces, `0x10`, `0b11`)
 * and its range error where the value overflows; underflow reads as zero, as in Go.
 */
export function parseGoFloat(text: string): number {
  const special = specialValue(text);
  if (special !== undefined) return special;
  if (DECIMAL.test(text)) {
    if (!/[0-9]/.test(text.replace(/[eE].*$/, ''))) throw syntaxError(text);
    if (text.includes('_') && !underscoresOk(text)) throw syntaxError(text);
    const value = Number(text.replaceAll('_', ''));
    if (!Number.isFinite(value)) throw rangeError(text);
    return value;
  }
  const hex = HEX.exec(text);
  if (hex) return hexValue(text, hex);
  throw syntaxError(text);
}

function specialValue(text: string): number | undefined {
  if (text.length < 3 || text.length > 9) return undefined;
  const lower = text.toLowerCase();
  if (lower === 'nan') return NaN;
  const sign = lower[0] === '-' ? -1 : 1;
  const word = lower[0] === '-' || lower[0] === '+' ? lower.slice(1) : lower;
  return word === 'inf' || word === 'infinity' ? sign * Infinity : undefined;
}

/** Go's `underscoreOK`: each underscore between two digits, or between the base prefix and a digit. */
function underscoresOk(text: string): boolean {
  let s = text[0] === '+' || text[0] === '-' ? text.slice(1) : text;
  let saw = '^';
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'xXbBoO'.includes(s[1]!)) {
    hex = s[1] === 'x' || s[1] === 'X';
    s = s.slice(2);
    saw = '0';
  }
  for (const c of s) {
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) saw = '0';
    else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

/** A hexadecimal float, rounded once to the nearest double (ties to even), subnormals included. */
function hexValue(text: string, [, sign, whole, fraction, exponent]: RegExpExecArray): number {
  if (text.includes('_') && !underscoresOk(text)) throw syntaxError(text);
  const intDigits = whole!.replaceAll('_', '');
  const fracDigits = fraction!.replaceAll('_', '');
  if (intDigits === '' && fracDigits === '') throw syntaxError(text);
  const negative = sign === '-';
  let mantissa = BigInt(`0x${intDigits}${fracDigits}` === '0x' ? '0x0' : `0x${intDigits}${fracDigits}`);
  // Exponents far past any double's are clamped: the value is zero or infinite either way.
  const exp = Math.max(-1e6, Math.min(1e6, Number(exponent!.replaceAll('_', '')))) - 4 * fracDigits.length;
  if (mantissa === 0n) return negative ? -0 : 0;
  const bits = mantissa.toString(2).length;
  // The lowest bit kept: 53 significant bits, but never below the smallest subnormal's.
  const low = Math.max(exp + bits - 53, -1074);
  const shift = low - exp;
  if (shift > 0) {
    const big = BigInt(shift);
    const kept = mantissa >> big;
    const rest = mantissa - (kept << big);
    const half = 1n << (big - 1n);
    mantissa = rest > half || (rest === half && (kept & 1n) === 1n) ? kept + 1n : kept;
  } else mantissa <<= BigInt(-shift);
  const value = Number(mantissa) * 2 ** Math.min(low, 1023) * (low > 1023 ? 2 ** (low - 1023) : 1);
  if (!Number.isFinite(value)) throw rangeError(text);
  return negative ? -value : value;
}

/** The largest magnitude of Go's `int64`, as a double (2^63): times at or past it overflow. */
export const INT64_LIMIT = 2 ** 63;

/**
 * Epoch milliseconds of a time the original holds and writes (`time.UnixMilli` as int64), or a
 * clear error naming what was out of range.
 */
export function checkedMillis(ms: number, what: string): number {
  if (!(ms > -INT64_LIMIT && ms < INT64_LIMIT)) throw new GoNumberError(`${what} is out of range`);
  return ms;
}

/** Go's `strconv.ParseInt(text, 10, 64)`: an optional sign and decimal digits within int64; null otherwise. */
export function parseGoInt64(text: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(text)) return null;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : null;
}
