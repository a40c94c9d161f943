// The special address ranges (R7.17): where a name may resolve that the egress proxy does not
// connect to unless a rule names the address itself, because what lies there is the machine, its
// network or the cloud's metadata service rather than the internet (SSRF through an allowed name).
// The ranges are net.BlockList subnets. An IPv6 address that carries an IPv4 address (mapped,
// NAT64, 6to4, compatible) is judged by the IPv4 address it carries: BlockList matches an IPv4
// subnet against `::ffff:a.b.c.d` but not against the other embeddings (see the test), so they are
// taken apart here rather than left to it.
import { BlockList, isIP } from 'node:net';

type Subnet = readonly [range: string, network: string, prefix: number];

/** In order: the first subnet holding the address names its range (metadata before link-local). */
const IPV4: readonly Subnet[] = [
  ['unspecified', '0.0.0.0', 8],
  ['private', '10.0.0.0', 8],
  ['carrier-grade NAT', '100.64.0.0', 10],
  ['loopback', '127.0.0.0', 8],
  ['cloud metadata', '169.254.169.254', 32],
  ['link-local', '169.254.0.0', 16],
  ['private', '172.16.0.0', 12],
  ['reserved', '192.0.0.0', 24],
  ['documentation', '192.0.2.0', 24],
  ['private', '192.168.0.0', 16],
  ['benchmarking', '198.18.0.0', 15],
  ['documentation', '198.51.100.0', 24],
  ['documentation', '203.0.113.0', 24],
  ['multicast', '224.0.0.0', 4],
  ['broadcast', '255.255.255.255', 32],
  ['reserved', '240.0.0.0', 4],
];

/** The IPv6 ranges after the embedded IPv4 forms; whatever lies outside 2000::/3 is 'reserved'. */
const IPV6: readonly Subnet[] = [
  ['cloud metadata', 'fd00:ec2::254', 128],
  ['unique local', 'fc00::', 7],
  ['link-local', 'fe80::', 10],
  ['site-local', 'fec0::', 10],
  ['multicast', 'ff00::', 8],
  ['documentation', '2001:db8::', 32],
  ['documentation', '3fff::', 20],
  ['reserved', '100::', 64],
  ['local-use NAT64', '64:ff9b:1::', 48],
];

function blockLists(subnets: readonly Subnet[], family: 'ipv4' | 'ipv6') {
  return subnets.map(([range, network, prefix]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { range, list };
  });
}

const IPV4_LISTS = blockLists(IPV4, 'ipv4');
const IPV6_LISTS = blockLists(IPV6, 'ipv6');
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [, head = '', a = '0', b = '0', c = '0', d = '0'] = dotted;
    text = `${head}${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`;
  }
  const [left = '', right] = text.split('::');
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  const zeros = Array<string>(8 - head.length - tail.length).fill('0');
  return [...head, ...(right === undefined ? [] : zeros), ...tail].map((group) =>
    parseInt(group, 16),
  );
}

/** An IPv4 address from two 16-bit groups. */
function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The IPv4 address an IPv6 address carries, with the name of how it carries it. */
function embeddedIPv4(groups: readonly number[]): { how: string; address: string } | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroToG4 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroToG4 && g5 === 0xffff) return { how: 'IPv4-mapped', address: ipv4Of(g6, g7) };
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return { how: 'NAT64', address: ipv4Of(g6, g7) };
  }
  if (g0 === 0x2002) return { how: '6to4', address: ipv4Of(g1, g2) };
  if (zeroToG4 && g5 === 0) return { how: 'IPv4-compatible', address: ipv4Of(g6, g7) };
  return undefined;
}

function ipv4Range(address: string): string | undefined {
  return IPV4_LISTS.find(({ list }) => list.check(address, 'ipv4'))?.range;
}

/**
 * The special range an address lies in ('loopback', 'private', 'link-local', 'cloud metadata',
 * 'carrier-grade NAT', 'multicast', 'reserved', 'unspecified', 'documentation', 'benchmarking',
 * 'unique local', 'site-local', 'IPv4-mapped loopback' …), or undefined for a public address.
 * Something that is no IP address at all is 'not an IP address': never public.
 */
export function specialRange(address: string): string | undefined {
  // A zone only says which interface; the range is the address's.
  const bare = address.replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return ipv4Range(bare);
  if (family !== 6) return 'not an IP address';
  const groups = ipv6Groups(bare);
  const leadingZeros = groups.slice(0, 7).every((group) => group === 0);
  if (leadingZeros && groups[7] === 0) return 'unspecified';
  if (leadingZeros && groups[7] === 1) return 'loopback';
  const embedded = embeddedIPv4(groups);
  if (embedded !== undefined) {
    const range = ipv4Range(embedded.address);
    return range === undefined ? undefined : `${embedded.how} ${range}`;
  }
  const range = IPV6_LISTS.find(({ list }) => list.check(bare, 'ipv6'))?.range;
  if (range !== undefined) return range;
  return GLOBAL_UNICAST.check(bare, 'ipv6') ? undefined : 'reserved';
}
