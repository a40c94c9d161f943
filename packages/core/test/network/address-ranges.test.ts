// R7.17: the special address ranges the egress proxy reaches only through a rule naming the
// address: IPv4 and IPv6, cloud metadata named as such, and IPv6 addresses carrying an IPv4 one
// (mapped, NAT64, 6to4, compatible) judged by what they carry. What net.BlockList does with such
// addresses is checked here rather than assumed.
import { BlockList } from 'node:net';
import { describe, expect, it } from 'vitest';
import { specialRange } from '../../src/network/address-ranges.js';

describe('specialRange', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
  ])('R7.17: IPv4 %s is %s', (address, range) => {
    expect(specialRange(address)).toBe(range);
  });

  it.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['100.63.255.255'],
    ['100.128.0.0'],
    ['172.15.255.255'],
    ['172.32.0.0'],
    ['198.20.0.0'],
    ['223.255.255.255'],
  ])('R7.17: IPv4 %s is public', (address) => {
    expect(specialRange(address)).toBeUndefined();
  });

  it.each([
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped cloud metadata'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['64:ff9b::169.254.169.254', 'NAT64 cloud metadata'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2002:c0a8:101::1', '6to4 private'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::a00:1', 'IPv4-compatible private'],
  ])('R7.17: IPv6 %s is %s', (address, range) => {
    expect(specialRange(address)).toBe(range);
  });

  it.each([
    ['2606:4700::1111'],
    ['2a00:1450:4001::200e'],
    ['::ffff:8.8.8.8'],
    ['64:ff9b::808:808'],
    ['2002:808:808::1'],
  ])('R7.17: IPv6 %s is public (a public IPv4 address carried is public)', (address) => {
    expect(specialRange(address)).toBeUndefined();
  });

  it('R7.17: what is no IP address is never public', () => {
    expect(specialRange('localhost')).toBe('not an IP address');
    expect(specialRange('')).toBe('not an IP address');
  });

  it('R7.17: net.BlockList matches an IPv4 subnet against ::ffff:a.b.c.d only, so the other embeddings are taken apart by hand', () => {
    const list = new BlockList();
    list.addSubnet('127.0.0.0', 8, 'ipv4');
    expect(list.check('::ffff:127.0.0.1', 'ipv6')).toBe(true);
    expect(list.check('::ffff:7f00:1', 'ipv6')).toBe(true);
    expect(list.check('64:ff9b::7f00:1', 'ipv6')).toBe(false);
    expect(list.check('2002:7f00:1::', 'ipv6')).toBe(false);
    expect(list.check('::127.0.0.1', 'ipv6')).toBe(false);
  });
});
