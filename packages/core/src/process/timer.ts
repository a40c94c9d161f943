// Node's timers hold a signed 32-bit millisecond delay: a longer one (about 24.8 days) fires after
// 1 ms instead, with only a warning. Every limit a caller can set goes through this clamp, so a
// huge timeout means "practically never", not "at once".

/** The longest delay a Node timer honours, in milliseconds. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a delay a timer honours: at most MAX_TIMER_MS (a huge or infinite limit never fires early). */
export function timerDelay(ms: number): number {
  return Number.isNaN(ms) ? MAX_TIMER_MS : Math.min(Math.max(ms, 0), MAX_TIMER_MS);
}
