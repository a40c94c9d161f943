// Which file systems a session's root may never be on: the kernel's pseudo file systems (proc,
// sysfs, devtmpfs, cgroup, debugfs, securityfs, …). A root there would give a session's commands
// write access to kernel knobs (`/proc/<server pid>/oom_score_adj`, cgroup limits, devices), so
// the decision is taken on the file system's TYPE, never on a path's name: statfs(2)'s magic
// number, and for the file systems that share tmpfs's magic (devtmpfs) the type the mount table
// (/proc/self/mountinfo) gives the device the path lies on.
import { readFile, stat, statfs } from 'node:fs/promises';

/** statfs f_type magic numbers (linux/magic.h) of file systems no root may be on. */
const PSEUDO_MAGIC: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x64626720, 'debugfs'],
  [0x73636673, 'securityfs'],
  [0x74726163, 'tracefs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0xf97cff8c, 'selinuxfs'],
  [0x43415d53, 'smackfs'],
  [0x65735543, 'fusectl'],
  [0x19800202, 'mqueue'],
  [0x958458f6, 'hugetlbfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0x6e736673, 'nsfs'],
  [0x0187, 'autofs'],
]);

/** The same file systems by the type the mount table names, plus those statfs cannot tell. */
const PSEUDO_TYPES: ReadonlySet<string> = new Set([
  ...PSEUDO_MAGIC.values(),
  'devtmpfs',
  'rpc_pipefs',
  'binder',
]);

/** The pseudo file system `path` lies on ("proc", "devtmpfs", …), or undefined for a real one. */
export async function pseudoFileSystem(path: string): Promise<string | undefined> {
  const magic = (await statfs(path)).type;
  const byMagic = PSEUDO_MAGIC.get(magic);
  if (byMagic !== undefined) return byMagic;
  const mounted = await mountedType(path);
  return mounted !== undefined && PSEUDO_TYPES.has(mounted) ? mounted : undefined;
}

/** The type /proc/self/mountinfo gives the device `path` lies on; undefined when unknown. */
async function mountedType(path: string): Promise<string | undefined> {
  const dev = (await stat(path, { bigint: true })).dev;
  // glibc's makedev: the major and minor numbers are split across the 64 bits.
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  const device = `${major.toString()}:${minor.toString()}`;
  let table: string;
  try {
    table = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined; // no /proc: statfs's answer stands
  }
  for (const line of table.split('\n')) {
    // "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw": the type follows " - ".
    const fields = line.split(' ');
    if (fields[2] !== device) continue;
    const separator = fields.indexOf('-', 6);
    if (separator !== -1) return fields[separator + 1];
  }
  return undefined;
}
