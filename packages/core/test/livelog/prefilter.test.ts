// The prefilter at run time (SPEC §2 Compatibility, livelog): a real worker thread matches the
// lines; a pattern that backtracks exponentially costs the worker, never the event loop, and is
// switched off after a few such lines (as the output tool's grep bounds a pattern's cost).
import { describe, expect, it } from 'vitest';
import { compilePrefilter } from '../../src/livelog/prefilter-pattern.js';
import { PREFILTER_MAX_STALLS, Prefilter } from '../../src/livelog/prefilter.js';

function prefilter(pattern: string, stallMs?: number) {
  const compiled = compilePrefilter(pattern);
  if (!compiled.ok) throw new Error(compiled.problem);
  const passed: string[] = [];
  const reasons: string[] = [];
  const filter = new Prefilter({
    pattern: compiled.pattern,
    onLine: (line) => passed.push(line),
    onSwitchedOff: (reason) => reasons.push(reason),
    stallMs,
  });
  return { filter, passed, reasons };
}

describe.concurrent('Prefilter', () => {
  it('SPEC §2 livelog: only matching lines pass, in the order they came, across batches', async () => {
    const { filter, passed } = prefilter('(?i)error|fatal');
    filter.push(['ok 1', 'ERROR one', 'ok 2']);
    filter.push(['fatal two']);
    filter.push(['ok 3', 'an error three']);
    await filter.settled();
    filter.stop();
    expect(passed).toEqual(['ERROR one', 'fatal two', 'an error three']);
    expect(filter.counts).toEqual({ lines: 6, passed: 3, skipped: 0, switchedOff: undefined });
  });

  it('SPEC §2 livelog: a catastrophic pattern stalls the worker, not the event loop; its lines go on unfiltered, and it is switched off', async () => {
    // A stall counts after 1.5 s: long enough that the event loop, on a machine the whole suite
    // shares, never waits that long for its turn, so a gap that long would be the matching's.
    const stallMs = 1500;
    const { filter, passed, reasons } = prefilter('^(a+)+$', stallMs);
    // Each of these lines backtracks for far longer than the test runs.
    const evil = `${'a'.repeat(40)}!`;
    let ticks = 0;
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 20);
    filter.push(['aaa', evil]);
    for (let i = 1; i < PREFILTER_MAX_STALLS; i++) filter.push([`${evil} ${String(i)}`]);
    filter.push(['after it was switched off']);
    await filter.settled();
    clearInterval(ticker);
    filter.stop();
    expect(ticks).toBeGreaterThan(10);
    // The event loop kept turning while the worker was stuck: never stopped for a stall's length.
    expect(longestGap).toBeLessThan(stallMs);
    expect(passed).toEqual([
      'aaa',
      evil,
      ...Array.from({ length: PREFILTER_MAX_STALLS - 1 }, (_, i) => `${evil} ${String(i + 1)}`),
      'after it was switched off',
    ]);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(
      new RegExp(
        `^${String(PREFILTER_MAX_STALLS)} lines each took over ${String(stallMs)} ms to match`,
      ),
    );
    expect(filter.counts.switchedOff).toBe(reasons[0]);
  });

  it('SPEC §2 livelog: stop drops what waits and settles at once', async () => {
    const { filter, passed } = prefilter('^(a+)+$', 60_000);
    filter.push([`${'a'.repeat(40)}!`]);
    filter.push(['aaaa']);
    filter.stop();
    await filter.settled();
    expect(passed).toEqual([]);
  });
});
