#!/usr/bin/env node
// A fixture for R15.2 (issue 26): the output of a noisy `cargo build`-like run, the kind a model
// is handed when a build fails. The same bytes every time (a seeded generator): an index update
// and downloads drawn as carriage-return progress bars, ANSI colours on every status word, a
// workspace whose members print the same `Compiling` line over and over, warnings with their
// source snippets, a `Building [===>  ] n/N` bar redrawn after every crate, and at the end the
// error that made it fail. Printed to stdout; `noisyBuild()` returns the same text.
//
//   node bench/noisy-build.mjs [--crates 400] [--repeats 1500] > noisy.log
import { pathToFileURL } from 'node:url';
import { numberOption } from './args.mjs';

const GREEN = '\u001b[1m\u001b[32m';
const YELLOW = '\u001b[1m\u001b[33m';
const RED = '\u001b[1m\u001b[31m';
const BLUE = '\u001b[1m\u001b[38;5;12m';
const BOLD = '\u001b[1m';
const RESET = '\u001b[0m';
/** Cargo clears the bar's line before it prints a status line over it. */
const CLEAR = '\r\u001b[K';

/** A small deterministic PRNG (mulberry32): the fixture is the same bytes on every run. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ser',
  'de',
  'tok',
  'io',
  'hyp',
  'er',
  'rand',
  'core',
  'mio',
  'syn',
  'quo',
  'te',
];
const SUFFIXES = ['', '-core', '-macros', '-util', '-derive', '-sys', '-impl'];

/** The build's output, `crates` dependencies and a run of `repeats` identical lines. */
export function noisyBuild({ crates = 400, repeats = 1500 } = {}) {
  const next = random(26);
  const pick = (list) => list[Math.floor(next() * list.length)];
  const version = () =>
    `${String(Math.floor(next() * 3))}.${String(Math.floor(next() * 40))}.${String(Math.floor(next() * 20))}`;
  const names = Array.from(
    { length: crates },
    (_, i) =>
      `${pick(SYLLABLES)}${pick(SYLLABLES)}${pick(SUFFIXES)}${i % 7 === 0 ? String(i) : ''}`,
  );
  const bar = (done, total, width = 25) => {
    const filled = Math.floor((done / total) * width);
    return `[${'='.repeat(filled)}${filled < width ? '>' : ''}${' '.repeat(Math.max(0, width - filled - 1))}]`;
  };
  const out = [];
  // The index update: one line redrawn with carriage returns.
  out.push(`${GREEN}    Updating${RESET} crates.io index\n`);
  for (let percent = 0; percent <= 100; percent += 2) {
    out.push(`${CLEAR}${BLUE}       Fetch${RESET} ${bar(percent, 100, 60)} ${String(percent)}%`);
  }
  out.push(`${CLEAR}`);
  // Downloads: a line each, under a bar redrawn between them.
  out.push(`${GREEN}  Downloading${RESET} crates ...\n`);
  names.forEach((name, i) => {
    out.push(`${CLEAR}${GREEN}  Downloaded${RESET} ${name} v${version()}\n`);
    out.push(`${BLUE} Downloading${RESET} ${String(i + 1)} crates remaining`);
  });
  out.push(`${CLEAR}${GREEN}  Downloaded${RESET} ${String(crates)} crates (41.7 MB) in 6.31s\n`);
  // Compiling, the bar redrawn after every line; now and then a warning with its snippet.
  names.forEach((name, i) => {
    out.push(`${CLEAR}${GREEN}   Compiling${RESET} ${name} v${version()}\n`);
    if (next() < 0.08) {
      const line = String(10 + Math.floor(next() * 400));
      out.push(
        `${YELLOW}warning${RESET}${BOLD}: unused variable: \`${pick(SYLLABLES)}\`${RESET}\n` +
          `${BLUE}  -->${RESET} src/${pick(SYLLABLES)}.rs:${line}:9\n` +
          `${BLUE}   |${RESET}\n` +
          `${BLUE}${line.padStart(3)} |${RESET}     let ${pick(SYLLABLES)} = compute();\n` +
          `${BLUE}   |${RESET}         ${YELLOW}^^^^${RESET} ${YELLOW}help: if this is intentional, prefix it with an underscore${RESET}\n` +
          `${BLUE}   |${RESET}\n` +
          `${BLUE}   = ${RESET}${BOLD}note${RESET}: \`#[warn(unused_variables)]\` on by default\n\n`,
      );
    }
    out.push(
      `${BLUE}    Building${RESET} ${bar(i + 1, crates + repeats)} ${String(i + 1)}/${String(crates + repeats)}: ${name}, ${pick(names)}`,
    );
  });
  // A workspace whose members all print the same line (a build script re-run for each).
  for (let i = 0; i < repeats; i++) {
    out.push(`${CLEAR}${GREEN}   Compiling${RESET} x v1.0.0 (/work/x)\n`);
    out.push(
      `${BLUE}    Building${RESET} ${bar(crates + i + 1, crates + repeats)} ${String(crates + i + 1)}/${String(crates + repeats)}: x`,
    );
  }
  // The error the build failed for, and the summary.
  out.push(
    `${CLEAR}${RED}error[E0308]${RESET}${BOLD}: mismatched types${RESET}\n` +
      `${BLUE}  --> ${RESET}src/main.rs:42:18\n` +
      `${BLUE}   |${RESET}\n` +
      `${BLUE}42 |${RESET}     let count: u32 = parse(input);\n` +
      `${BLUE}   |${RESET}                ${BLUE}---${RESET}   ${RED}^^^^^^^^^^^^${RESET} ${RED}expected \`u32\`, found \`Result<u32, ParseError>\`${RESET}\n` +
      `${BLUE}   |${RESET}                ${BLUE}|${RESET}\n` +
      `${BLUE}   |${RESET}                ${BLUE}expected due to this${RESET}\n` +
      `${BLUE}   |${RESET}\n` +
      `${BLUE}   = ${RESET}${BOLD}note${RESET}: expected type \`u32\`\n` +
      `              found enum \`Result<u32, ParseError>\`\n` +
      `${BLUE}help${RESET}: consider using \`Result::expect\` to unwrap the \`Result<u32, ParseError>\` value, panicking if the value is a \`Result::Err\`\n` +
      `${BLUE}   |${RESET}\n` +
      `${BLUE}42 |${RESET}     let count: u32 = parse(input)${GREEN}.expect("REASON")${RESET};\n` +
      `${BLUE}   |${RESET}                                  ${GREEN}+++++++++++++++++${RESET}\n\n` +
      `${BOLD}For more information about this error, try \`rustc --explain E0308\`.${RESET}\n` +
      `${YELLOW}warning${RESET}: \`app\` (bin "app") generated 3 warnings\n` +
      `${RED}error${RESET}: could not compile \`app\` (bin "app") due to 1 previous error; 3 warnings emitted\n`,
  );
  return out.join('');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(
    noisyBuild({ crates: numberOption('crates', 400), repeats: numberOption('repeats', 1500) }),
  );
  process.exitCode = 101;
}
