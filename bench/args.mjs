// The `--name value` options of the benchmark scripts' command lines.
const args = process.argv.slice(2);

/** The value after `--name` as written, else `fallback`. */
export function option(name, fallback) {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? args[index + 1] : fallback;
}

/** The value after `--name` as a number, else `fallback`. */
export function numberOption(name, fallback) {
  const index = args.indexOf(`--${name}`);
  return index >= 0 ? Number(args[index + 1]) : fallback;
}
