// `ahma-shell doctor` (R7.12), run for real: the BUILT binary (bin/ahma-shell.js doctor), as root
// and as an ordinary user (uid 65534 through setpriv when the test process is root), each with the
// HOME, TMPDIR and mirror of the built server the red-team suite gives it (red-team/harness.ts).
// Its probes run through a real sandbox, so what it reports is what this machine enforces; the
// tests pin the shape of the report, the exit code rule, and that it leaves nothing behind.
import { spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exitCodeOf,
  formatReport,
  PROTECTIONS,
  ROW_IDS,
  row,
  type DoctorReport,
  type DoctorRow,
  type DoctorStatus,
} from '../../../src/cli/doctor/report.js';
import { asIdentity, IDENTITIES, RunDir, Seat } from '../../red-team/harness.js';
import { BIN } from '../../support/harness.js';

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface JsonReport {
  readonly sandbox: { readonly mechanism: string; readonly abi: number | null };
  readonly rows: DoctorRow[];
  readonly verdict: { readonly enforced: boolean; readonly shortfalls: string[] };
  readonly exit_code: number;
  readonly notes: string[];
}

const STATUSES: readonly DoctorStatus[] = ['enforced by kernel', 'detected only', 'not enforced'];

function collect(command: string, args: readonly string[], options: object): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `ahma-shell doctor …args` as the seat's identity, with its environment. */
async function doctor(seat: Seat, args: readonly string[] = []): Promise<Ran> {
  const { node, bin } = await seat.runtime();
  const { command, args: argv } = asIdentity(seat.identity, node, [bin, 'doctor', ...args]);
  return collect(command, argv, { env: seat.env(node), cwd: seat.home });
}

/** The table's rows: protection, status and why, split at the fixed columns. */
function tableRows(stdout: string): { protection: string; status: string; why: string }[] {
  const lines = stdout.split('\n');
  const rule = lines.findIndex((line) => /^-+ {2}-+ {2}-+$/.test(line));
  const [protectionWidth = 0, statusWidth = 0] = (lines[rule] ?? '')
    .split('  ')
    .map((dashes) => dashes.length);
  const rows = [];
  for (const line of lines.slice(rule + 1)) {
    if (line === '') break;
    rows.push({
      protection: line.slice(0, protectionWidth).trimEnd(),
      status: line.slice(protectionWidth + 2, protectionWidth + 2 + statusWidth).trimEnd(),
      why: line.slice(protectionWidth + 2 + statusWidth + 2),
    });
  }
  return rows;
}

/** Workspaces of the doctor under /var/tmp owned by `uid`. */
async function workspaces(uid: number): Promise<string[]> {
  const names = (await readdir('/var/tmp')).filter((name) => name.startsWith('ahma-doctor-'));
  const owned: string[] = [];
  for (const name of names) {
    const st = await stat(join('/var/tmp', name)).catch(() => undefined);
    if (st?.uid === uid) owned.push(name);
  }
  return owned;
}

let runDir: RunDir;
beforeAll(async () => {
  runDir = await RunDir.create();
}, 60_000);
afterAll(async () => {
  await runDir.dispose();
});

describe.each(IDENTITIES)('ahma-shell doctor as $name', (identity) => {
  let seat: Seat | undefined;
  beforeAll(async () => {
    if (identity.skip === undefined) seat = await Seat.create(identity, runDir);
  }, 60_000);
  afterAll(async () => {
    await seat?.dispose();
  }, 60_000);
  const mySeat = (context: { skip: (note: string) => void }): Seat => {
    if (identity.skip !== undefined || seat === undefined) {
      context.skip(identity.skip ?? 'no seat');
      throw new Error('skipped');
    }
    return seat;
  };

  it('R7.12: prints one row per protection, measured through the sandbox, and exits 0 only when writes, reads and hand-off files are enforced by the kernel', async (context) => {
    const s = mySeat(context);
    const before = await workspaces(identity.uid);
    const text = await doctor(s);
    const json = await doctor(s, ['--json']);
    expect(text.stderr).toBe('');
    expect(json.stderr).toBe('');
    expect(text.stdout).toMatch(
      new RegExp(
        `^ahma-shell doctor: what is enforced on this machine \\(.*uid ${String(identity.uid)}, sandbox: landlock ABI \\d+\\)\\n`,
      ),
    );
    const rows = tableRows(text.stdout);
    expect(rows.map((each) => each.protection)).toEqual(ROW_IDS.map((id) => PROTECTIONS[id]));
    for (const each of rows) expect(STATUSES).toContain(each.status);
    const status = Object.fromEntries(rows.map((each, i) => [ROW_IDS[i], each.status]));
    const why = Object.fromEntries(rows.map((each, i) => [ROW_IDS[i], each.why]));

    // What every Linux machine Ahma starts on enforces (the server refuses to start otherwise).
    expect(status['writes'], why['writes']).toBe('enforced by kernel');
    expect(why['writes']).toMatch(
      /^Landlock: creating a file outside every writable path was refused \(Permission denied\)$/,
    );
    expect(status['reads'], why['reads']).toBe('enforced by kernel');
    expect(why['reads']).toMatch(
      /Ahma's private state.*no rule grants any of the \d+ denied paths? present$/,
    );
    expect(status['capabilities'], why['capabilities']).toBe('enforced by kernel');
    expect(status['seccomp'], why['seccomp']).toBe('enforced by kernel');
    expect(why['seccomp']).toMatch(/^filter in force \(Seccomp: 2\): chmod u\+s refused/);
    expect(status['landlock']).toBe('enforced by kernel');
    expect(status['userns'], why['userns']).toBe('enforced by kernel');
    expect(why['userns']).toMatch(/unshare -U refused in commands.*outside the sandbox this user/);
    // The network row reports the mode in force: there is no confinement to probe yet.
    expect(status['network']).toBe('not enforced');
    expect(why['network']).toContain('--network host');

    const report = JSON.parse(json.stdout) as JsonReport;
    expect(report.rows.map((each) => each.id)).toEqual([...ROW_IDS]);
    expect(report.rows.map((each) => each.status)).toEqual(rows.map((each) => each.status));
    expect(report.sandbox.mechanism).toBe('landlock');
    const abi = report.sandbox.abi ?? 0;
    expect(why['landlock']).toBe(
      abi >= 6
        ? `ABI ${String(abi)} (helper probe): files, signals and abstract unix sockets confined`
        : `ABI ${String(abi)} (helper probe): files confined; signals and abstract unix sockets not scoped (needs ABI 6, Linux 6.12)`,
    );
    // Signals are scoped from ABI 6; ptrace (the environ read) at every ABI.
    expect(status['signals'], why['signals']).toBe(
      abi >= 6 ? 'enforced by kernel' : 'not enforced',
    );

    // The exit code follows the three required rows, here as in the JSON.
    const required = ['writes', 'reads', 'handoff'].every(
      (id) => status[id] === 'enforced by kernel',
    );
    expect(text.code).toBe(required ? 0 : 1);
    expect(json.code).toBe(text.code);
    expect(report.exit_code).toBe(text.code);
    expect(report.verdict.enforced).toBe(required);
    expect(text.stdout).toMatch(
      required
        ? /\nverdict: the default policy for writes, reads and hand-off files is enforced by the kernel\n/
        : /\nverdict: NOT fully enforced: .*hand-off files \((not enforced|detected only)\)/,
    );
    // Nothing left: no workspace, no state of the doctor's engines.
    expect(await workspaces(identity.uid)).toEqual(before);
    const state = join(s.home, '.local', 'state', 'ahma');
    for (const dir of ['servers', 'caches']) {
      expect(await readdir(join(state, dir)).catch(() => []), dir).toEqual([]);
    }
  }, 60_000);

  it('R7.12: under --no-sandbox every protection is reported not enforced and the exit code is 1', async (context) => {
    const s = mySeat(context);
    const ran = await doctor(s, ['--no-sandbox', '--json']);
    expect(ran.code).toBe(1);
    const report = JSON.parse(ran.stdout) as JsonReport;
    expect(report.sandbox.mechanism).toBe('none');
    expect(report.rows.map((each) => [each.id, each.status])).toEqual(
      ROW_IDS.map((id) => [id, 'not enforced']),
    );
    // Measured, not assumed: the probes ran unconfined and got through.
    const writes = report.rows.find((each) => each.id === 'writes');
    expect(writes?.why).toBe('--no-sandbox: a command created a file outside every writable path');
    expect(report.verdict.shortfalls).toEqual(['writes', 'reads', 'handoff']);
  }, 60_000);

  it('R7.12, R7.15: --network none is probed: the network row is enforced by the kernel', async (context) => {
    const s = mySeat(context);
    const ran = await doctor(s, ['--network', 'none', '--json']);
    const report = JSON.parse(ran.stdout) as JsonReport;
    const network = report.rows.find((each) => each.id === 'network');
    expect(network?.status).toBe('enforced by kernel');
    expect(network?.why).toMatch(/--network none: a TCP and a UDP socket were refused/);
  }, 60_000);

  it('R7.12, R7.16: --network proxy is probed: direct TCP and UDP refused, the egress proxy reached', async (context) => {
    const s = mySeat(context);
    const ran = await doctor(s, ['--network', 'proxy', '--allow-host', 'example.com', '--json']);
    const report = JSON.parse(ran.stdout) as JsonReport;
    const network = report.rows.find((each) => each.id === 'network');
    expect(network?.status).toBe('enforced by kernel');
    expect(network?.why).toMatch(
      /--network proxy: a direct TCP connect and a UDP socket were refused, the egress proxy was reached .*; 1 host rule allow/,
    );
  }, 60_000);

  it.runIf(identity.uid === 0)(
    'R7.12: --keep-capabilities is reported: the capabilities row is not enforced',
    async (context) => {
      const s = mySeat(context);
      const ran = await doctor(s, ['--keep-capabilities', '--json']);
      const report = JSON.parse(ran.stdout) as JsonReport;
      const capabilities = report.rows.find((each) => each.id === 'capabilities');
      expect(capabilities?.status).toBe('not enforced');
      expect(capabilities?.why).toMatch(
        /^commands hold capabilities: CapEff=[0-9a-f]+, .*\(--keep-capabilities\)$/,
      );
    },
    60_000,
  );
});

describe('ahma-shell doctor: usage', () => {
  const run = (args: readonly string[]) =>
    collect(process.execPath, [BIN, 'doctor', ...args], { env: process.env });

  it('R7.12: --help prints the doctor usage and exits 0', async () => {
    const ran = await run(['--help']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^Usage:\n {2}ahma-shell doctor \[server options\] \[--json\]\n/);
  });

  it('R7.12: an unknown flag, a tool or words after -- are usage errors (exit 2)', async () => {
    for (const args of [['--bogus'], ['--tool_name', 'x'], ['--', 'x'], ['--timeout', '0']]) {
      const ran = await run(args);
      expect(ran.code, args.join(' ')).toBe(2);
      expect(ran.stdout, args.join(' ')).toBe('');
      expect(ran.stderr, args.join(' ')).toMatch(/^ahma-shell doctor: .+\n\nUsage:/);
    }
  });
});

describe('the report', () => {
  const all = (status: DoctorStatus): DoctorRow[] => ROW_IDS.map((id) => row(id, status, 'why'));
  const report = (rows: DoctorRow[]): DoctorReport => ({
    machine: 'Linux 6.12.0, uid 1000',
    mechanism: 'landlock',
    abi: 6,
    rows,
    notes: ['a note'],
    opsPages: [],
  });

  it('R7.12: exits 0 only when writes, reads and hand-off files are all enforced by the kernel', () => {
    expect(exitCodeOf(report(all('enforced by kernel')))).toBe(0);
    // The other rows do not decide it: the network row reports a mode.
    const others = all('not enforced').map((each) =>
      ['writes', 'reads', 'handoff'].includes(each.id)
        ? { ...each, status: 'enforced by kernel' as const }
        : each,
    );
    expect(exitCodeOf(report(others))).toBe(0);
    for (const id of ['writes', 'reads', 'handoff'] as const) {
      for (const status of ['detected only', 'not enforced'] as const) {
        const rows = all('enforced by kernel').map((each) =>
          each.id === id ? { ...each, status } : each,
        );
        expect(exitCodeOf(report(rows)), `${id} ${status}`).toBe(1);
      }
    }
  });

  it('R7.12: the table has fixed columns, then the verdict and the notes', () => {
    const rows = all('enforced by kernel').map((each) =>
      each.id === 'handoff' ? { ...each, status: 'detected only' as const } : each,
    );
    expect(formatReport(report(rows))).toBe(
      [
        'ahma-shell doctor: what is enforced on this machine (Linux 6.12.0, uid 1000, sandbox: landlock ABI 6)',
        '',
        'protection                    status              how / why',
        '----------------------------  ------------------  ---------',
        'writes outside the scope      enforced by kernel  why',
        'reads of secrets              enforced by kernel  why',
        'hand-off files                detected only       why',
        'network                       enforced by kernel  why',
        'signals/ptrace to the server  enforced by kernel  why',
        'capabilities                  enforced by kernel  why',
        'seccomp                       enforced by kernel  why',
        'Landlock ABI                  enforced by kernel  why',
        'user namespaces               enforced by kernel  why',
        '',
        'verdict: NOT fully enforced: hand-off files (detected only)',
        'note: a note',
        '',
      ].join('\n'),
    );
  });
});
