// What `ahma-shell doctor` reports (R7.12): one row per protection, each with its status and why,
// the verdict and exit code that follow from them, and the two ways it is printed (a plain-text
// table, stable for tests and the README, and JSON for machines).

/** How a protection stands on this machine. */
export type DoctorStatus = 'enforced by kernel' | 'detected only' | 'not enforced';

export const ROW_IDS = [
  'writes',
  'reads',
  'handoff',
  'network',
  'signals',
  'capabilities',
  'seccomp',
  'landlock',
  'userns',
] as const;

export type RowId = (typeof ROW_IDS)[number];

/** The protection each row is about, as the table names it. */
export const PROTECTIONS: Readonly<Record<RowId, string>> = {
  writes: 'writes outside the scope',
  reads: 'reads of secrets',
  handoff: 'hand-off files',
  network: 'network',
  signals: 'signals/ptrace to the server',
  capabilities: 'capabilities',
  seccomp: 'seccomp',
  landlock: 'Landlock ABI',
  userns: 'user namespaces',
};

/** The rows that must be enforced by the kernel for the doctor to exit 0. */
export const REQUIRED: readonly RowId[] = ['writes', 'reads', 'handoff'];

export interface DoctorRow {
  readonly id: RowId;
  readonly protection: string;
  readonly status: DoctorStatus;
  /** How it is enforced, or why it is not: what the probe saw. */
  readonly why: string;
}

export interface DoctorReport {
  /** `Linux 6.12.1, uid 1000` and the like: where it was measured. */
  readonly machine: string;
  /** The sandbox mechanism in force ('none' under --no-sandbox or when it could not start). */
  readonly mechanism: string;
  readonly abi: number | undefined;
  readonly rows: readonly DoctorRow[];
  /** The sandbox's own warnings (running as root, an old Landlock ABI), and start-up refusals. */
  readonly notes: readonly string[];
  /** The unused one-time links of the operations pages of the servers running now. */
  readonly opsPages: readonly string[];
}

export function row(id: RowId, status: DoctorStatus, why: string): DoctorRow {
  return { id, protection: PROTECTIONS[id], status, why };
}

/** The required rows that are not enforced by the kernel. */
export function shortfalls(report: DoctorReport): DoctorRow[] {
  return REQUIRED.map(
    (id) => report.rows.find((each) => each.id === id) ?? row(id, 'not enforced', 'not measured'),
  ).filter((each) => each.status !== 'enforced by kernel');
}

/** 0 only when writes, reads and hand-off files are all enforced by the kernel; 1 otherwise. */
export function exitCodeOf(report: DoctorReport): 0 | 1 {
  return shortfalls(report).length === 0 ? 0 : 1;
}

/** The one-line verdict under the table. */
export function verdictLine(report: DoctorReport): string {
  const missing = shortfalls(report);
  if (missing.length === 0) {
    return 'verdict: the default policy for writes, reads and hand-off files is enforced by the kernel';
  }
  const list = missing.map((each) => `${each.protection} (${each.status})`).join(', ');
  return `verdict: NOT fully enforced: ${list}`;
}

const HEADINGS = { protection: 'protection', status: 'status', why: 'how / why' } as const;
const PROTECTION_WIDTH = Math.max(
  HEADINGS.protection.length,
  ...Object.values(PROTECTIONS).map((name) => name.length),
);
const STATUS_WIDTH = Math.max(
  HEADINGS.status.length,
  ...(['enforced by kernel', 'detected only', 'not enforced'] satisfies DoctorStatus[]).map(
    (status) => status.length,
  ),
);

/** The plain-text report: a heading, the table (fixed column widths), the verdict, the notes. */
export function formatReport(report: DoctorReport): string {
  const line = (protection: string, status: string, why: string) =>
    `${protection.padEnd(PROTECTION_WIDTH)}  ${status.padEnd(STATUS_WIDTH)}  ${why}`.trimEnd();
  const sandbox =
    report.abi === undefined ? report.mechanism : `${report.mechanism} ABI ${String(report.abi)}`;
  return [
    `ahma-shell doctor: what is enforced on this machine (${report.machine}, sandbox: ${sandbox})`,
    '',
    line(HEADINGS.protection, HEADINGS.status, HEADINGS.why),
    line('-'.repeat(PROTECTION_WIDTH), '-'.repeat(STATUS_WIDTH), '-'.repeat(HEADINGS.why.length)),
    ...report.rows.map((each) => line(each.protection, each.status, each.why)),
    '',
    verdictLine(report),
    ...report.notes.map((note) => `note: ${note}`),
    ...(report.opsPages.length === 0
      ? []
      : ['', 'Operations pages of the servers running now (one-time links):'].concat(
          report.opsPages.map((link) => `  ${link}`),
        )),
    '',
  ].join('\n');
}

/** The report for machines (--json). */
export function reportJson(report: DoctorReport): string {
  const missing = shortfalls(report);
  return `${JSON.stringify(
    {
      machine: report.machine,
      sandbox: { mechanism: report.mechanism, abi: report.abi ?? null },
      rows: report.rows,
      verdict: {
        enforced: missing.length === 0,
        shortfalls: missing.map((each) => each.id),
        line: verdictLine(report),
      },
      exit_code: exitCodeOf(report),
      notes: report.notes,
      ops_pages: report.opsPages,
    },
    null,
    2,
  )}\n`;
}
