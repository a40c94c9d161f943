// Percentiles of a list of timings, as every benchmark here reports them.
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const round = (x) => Math.round(x * 1000) / 1000;
  return { count: sorted.length, p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)) };
}
