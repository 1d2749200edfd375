/**
 * Long conversions (a million points generated, 100,000 series read, an answer of 200 MB encoded)
 * run in slices: the loop that does them asks `sliceDue()` at a coarse step (per series, per frame,
 * per few thousand rows, never per point) and, when its slice is used up, awaits `nextSlice()`,
 * which lets every other request (a health check, a login) have its turn first. The slice is
 * measured from the last time any of them gave the event loop back, so two conversions running at
 * once do not each take a full slice per turn.
 */

/** Milliseconds of work between turns of the event loop. */
export const SLICE_MS = 8;

let sliceStart = performance.now();

/** Whether the current slice is used up. */
export function sliceDue(): boolean {
  return performance.now() - sliceStart >= SLICE_MS;
}

/** Gives the event loop a turn (its I/O included), then starts a new slice. */
export async function nextSlice(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  sliceStart = performance.now();
}

/** `nextSlice()` when the slice is used up; a resolved promise otherwise. */
export function slice(): Promise<void> | undefined {
  return sliceDue() ? nextSlice() : undefined;
}

/**
 * Work written as a generator that stops (`yield`) at its slice points: `drain` runs it at once
 * (pure callers, tests), `drainSliced` gives the event loop a turn at a stop when the slice is used up.
 */
export type Steps<T = void> = Generator<void, T, void>;

export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

export async function drainSliced<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (sliceDue()) await nextSlice();
  }
}
