import { ownMessage } from '../answer-error.ts';
import { MESSAGES } from '../../errors/messages.ts';
import { fieldLength, type DataResponse, type Frame } from '../frames/frame.ts';
import { failed } from './kind.ts';

/**
 * What every kind does with an upstream call that failed (unreachable, timeout, egress policy) and
 * with answers past the point limit, in one place so the kinds word them alike.
 */

/** A rejection of `KindContext.call` as the refId's answer: its message and status (502 when it has none). */
export function callFailed(error: unknown): DataResponse {
  const status = typeof (error as { status?: unknown })?.status === 'number' ? (error as { status: number }).status : 502;
  const message = ownMessage(error);
  return failed(message, 'downstream', status);
}

/** Points in frames: rows summed over fields. */
export function countPoints(frames: readonly Frame[]): number {
  let points = 0;
  for (const frame of frames) for (const field of frame.fields) points += fieldLength(field);
  return points;
}

/** The frames as the refId's answer, or its failure when they hold more than `max` points (as Prometheus says it). */
export function framesOrLimit(frames: Frame[], max: number): DataResponse {
  if (countPoints(frames) > max) return failed(MESSAGES.query.tooManyPoints(max), 'plugin', 400);
  return { frames };
}
