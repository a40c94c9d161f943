// Percentiles of a list of timings, as every benchmark here reports them.
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const round = (x) => Math.round(x * 1000) / 1000;
  return { count: sorted.length, p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)) };
}

/**
 * Times each of `kinds` (name → async work) `n` times, round-robin so they share the machine's
 * noise, after `warmup` untimed rounds; returns the timings (ms) by name.
 */
export async function roundRobin(kinds, n, warmup = 20) {
  const { performance } = await import('node:perf_hooks');
  const times = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, []]));
  for (let i = 0; i < warmup; i++) for (const work of Object.values(kinds)) await work();
  for (let i = 0; i < n; i++) {
    for (const [kind, work] of Object.entries(kinds)) {
      const started = performance.now();
      await work();
      times[kind].push(performance.now() - started);
    }
  }
  return times;
}
