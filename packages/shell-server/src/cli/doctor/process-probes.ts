// The probes of what a command's process may do beyond files: signal or trace the server, hold
// capabilities, escape the seccomp filter, create user namespaces. Real commands through the
// engine, judged by what they printed (and, for chmod u+s, by the file on disk).
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { UserNamespaces } from './host.js';
import { fields, mechanismName, q, reason, sh, type ProbeContext } from './probe-command.js';
import { row, type DoctorRow } from './report.js';

export async function probeSignals(context: ProbeContext): Promise<DoctorRow> {
  const pid = String(context.serverPid);
  const ran = await sh(
    context,
    [
      `kill -0 $$ 2>/dev/null; echo "self=$?"`,
      `printf 'kill_error=%s\\n' "$(kill -0 ${pid} 2>&1)"; kill -0 ${pid} 2>/dev/null; echo "kill=$?"`,
      `printf 'environ_error=%s\\n' "$(head -c 1 /proc/${pid}/environ 2>&1 >/dev/null)"`,
      `head -c 1 /proc/${pid}/environ >/dev/null 2>&1; echo "environ=$?"`,
    ].join('\n'),
  );
  const seen = fields(ran.output);
  if (seen.get('self') !== '0') {
    return row('signals', 'not enforced', `not measured: the probe command failed (${ran.output})`);
  }
  const abi = context.engine.sandbox.abi;
  const reached: string[] = [];
  if (seen.get('kill') === '0') {
    reached.push(
      `commands can signal the server${abi !== undefined && abi < 6 ? ` (Landlock ABI ${String(abi)} < 6 does not scope signals)` : ''}`,
    );
  }
  if (seen.get('environ') === '0') reached.push("commands can read the server's environment");
  if (reached.length > 0) return row('signals', 'not enforced', reached.join('; '));
  return row(
    'signals',
    'enforced by kernel',
    `${mechanismName(context.engine)} scoping${abi === undefined ? '' : ` (ABI ${String(abi)})`}: kill -0 of the server refused (${reason(seen.get('kill_error'))}), its /proc environ unreadable (${reason(seen.get('environ_error'))})`,
  );
}

export interface ProcessProbe {
  readonly capabilities: DoctorRow;
  readonly seccomp: DoctorRow;
  readonly userns: DoctorRow;
}

/** A command reports its capability sets and seccomp mode, tries chmod u+s and unshare -U. */
export async function probeProcess(
  context: ProbeContext,
  host: UserNamespaces,
): Promise<ProcessProbe> {
  const setuidFile = join(context.workspace.scope, 'doctor-setuid');
  const ran = await sh(
    context,
    [
      `grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status`,
      'echo "uid=$(id -u)"',
      `: > ${q(setuidFile)}`,
      `printf 'chmod_error=%s\\n' "$(chmod u+s ${q(setuidFile)} 2>&1)"`,
      'if command -v unshare >/dev/null 2>&1; then',
      `  printf 'unshare_error=%s\\n' "$(unshare -U true 2>&1)"`,
      '  unshare -U true >/dev/null 2>&1; echo "unshare=$?"',
      'else echo "unshare=missing"; fi',
    ].join('\n'),
  );
  const seen = fields(ran.output);
  return {
    capabilities: capabilitiesRow(seen, context.keepCapabilities, ran.output),
    seccomp: await seccompRow(seen, setuidFile, ran.output),
    userns: usernsRow(seen, host),
  };
}

function capabilitiesRow(seen: Map<string, string>, keep: boolean, output: string): DoctorRow {
  const sets = ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'] as const;
  const values = sets.map((name) => seen.get(name));
  if (values.some((value) => value === undefined)) {
    return row('capabilities', 'not enforced', `not measured: no /proc/self/status (${output})`);
  }
  const zero = (name: (typeof sets)[number]) => /^0+$/.test(seen.get(name) ?? '');
  const uid = seen.get('uid');
  // An ordinary user's bounding set cannot be emptied and needs not be: with no_new_privs an exec
  // never grants a capability to a uid other than 0.
  const bounding = zero('CapBnd') || (uid !== '0' && seen.get('NoNewPrivs') === '1');
  if (zero('CapInh') && zero('CapPrm') && zero('CapEff') && zero('CapAmb') && bounding) {
    return row(
      'capabilities',
      'enforced by kernel',
      zero('CapBnd')
        ? 'every capability set of a command is empty (CapEff=0, CapBnd=0)'
        : `a command holds none (CapEff=0) and, as uid ${String(uid)} with no_new_privs, can gain none`,
    );
  }
  return row(
    'capabilities',
    'not enforced',
    `commands hold capabilities: CapEff=${String(seen.get('CapEff'))}, CapBnd=${String(seen.get('CapBnd'))}${keep ? ' (--keep-capabilities)' : ''}`,
  );
}

async function seccompRow(
  seen: Map<string, string>,
  setuidFile: string,
  output: string,
): Promise<DoctorRow> {
  const mode = seen.get('Seccomp');
  if (mode === undefined) {
    return row('seccomp', 'not enforced', `not measured: no /proc/self/status (${output})`);
  }
  const st = await stat(setuidFile).catch(() => undefined);
  if (st === undefined) {
    return row('seccomp', 'not enforced', `not measured: the probe command failed (${output})`);
  }
  const setuid = (st.mode & 0o4000) !== 0;
  if (mode === '2' && !setuid) {
    return row(
      'seccomp',
      'enforced by kernel',
      `filter in force (Seccomp: 2): chmod u+s refused (${reason(seen.get('chmod_error'))})`,
    );
  }
  return row(
    'seccomp',
    'not enforced',
    [
      ...(mode === '2' ? [] : [`no filter (Seccomp: ${mode})`]),
      ...(setuid ? ['a command set a set-user-ID bit'] : []),
    ].join('; '),
  );
}

function usernsRow(seen: Map<string, string>, host: UserNamespaces): DoctorRow {
  const outside =
    host.available === true
      ? 'can create them'
      : host.available === false
        ? 'cannot create them'
        : 'unknown';
  const hostText = `outside the sandbox this user ${outside}${host.detail === '' ? '' : ` (${host.detail})`}`;
  const result = seen.get('unshare');
  if (result === undefined || result === 'missing') {
    return row('userns', 'not enforced', `not measured: unshare is not installed; ${hostText}`);
  }
  if (result === '0') {
    return row('userns', 'not enforced', `commands can create user namespaces; ${hostText}`);
  }
  return row(
    'userns',
    'enforced by kernel',
    `seccomp: unshare -U refused in commands (${reason(seen.get('unshare_error'))}); ${hostText}`,
  );
}
