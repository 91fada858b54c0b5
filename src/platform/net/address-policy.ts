import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Where outbound requests to addresses a tenant chose (webhook endpoints) may go: server-side
 * request forgery protection. An address is
 * allowed when it is public unicast; loopback, private, link-local (cloud metadata at
 * 169.254.169.254), unique-local (fd00:ec2::254), carrier-grade NAT, multicast, reserved and
 * unspecified ranges are refused, for IPv4 and IPv6, with IPv4-mapped and NAT64/6to4/Teredo
 * addresses judged as what they embed or refused. The operator's allow-list
 * (WEBHOOK_ALLOWED_HOSTS) names host names and CIDR ranges that are allowed anyway.
 * Ranges come from ipaddr.js, never from our own parsing.
 */

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface AllowList {
  hosts: ReadonlySet<string>;
  ranges: readonly Range[];
}

export const EMPTY_ALLOW_LIST: AllowList = { hosts: new Set(), ranges: [] };

/** Parses WEBHOOK_ALLOWED_HOSTS entries: an address or CIDR range, or a host name (exact, case-insensitive). */
export function parseAllowList(entries: readonly string[]): { allowList: AllowList; problems: string[] } {
  const hosts = new Set<string>();
  const ranges: Range[] = [];
  const problems: string[] = [];
  for (const raw of entries.map((e) => e.trim()).filter(Boolean)) {
    const entry = raw.replace(/^\[(.*)\]$/, '$1');
    if (ipaddr.isValidCIDR(entry)) ranges.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) {
      const address = ipaddr.parse(entry);
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry)) hosts.add(entry.toLowerCase());
    else problems.push(`WEBHOOK_ALLOWED_HOSTS: "${raw}" is neither a host name, an address nor a CIDR range`);
  }
  return { allowList: { hosts, ranges }, problems };
}

/** The URL's host as a name or a bare address (IPv6 without brackets), lower case. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();

function inRanges(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: readonly Range[]): boolean {
  return ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base as never, bits));
}

/** Why an address may not be reached (its range), or null when it may. */
export function refusedRange(address: string, allowList: AllowList): string | null {
  if (!ipaddr.isValid(address)) return 'not an address';
  const parsed = ipaddr.parse(address);
  // An IPv4-mapped IPv6 address reaches the IPv4 address it carries.
  const effective = ipaddr.process(address);
  if (inRanges(parsed, allowList.ranges) || inRanges(effective, allowList.ranges)) return null;
  const range = effective.range();
  return range === 'unicast' ? null : range;
}

export class RefusedTarget extends Error {}

export interface CheckedTarget {
  /** The address to connect to: the one that was checked, so a second lookup cannot swap it. */
  address: string;
  family: 4 | 6;
  /** The host is on the allow-list by name (http is allowed to it). */
  allowedByName: boolean;
}

/**
 * Resolves the URL's host and checks every address it resolves to; any refused address refuses
 * the target (a name that answers with a public and a private address is not a way around).
 */
export async function checkTarget(url: URL, allowList: AllowList, resolve: Resolver): Promise<CheckedTarget> {
  const host = hostOf(url);
  const allowedByName = allowList.hosts.has(host);
  let addresses: Array<{ address: string; family: number }>;
  if (ipaddr.isValid(host)) addresses = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv4' ? 4 : 6 }];
  else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw new RefusedTarget(`${host} does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})`);
    }
    if (addresses.length === 0) throw new RefusedTarget(`${host} does not resolve`);
  }
  if (!allowedByName) {
    for (const { address } of addresses) {
      const refused = refusedRange(address, allowList);
      if (refused) throw new RefusedTarget(`${host} resolves to ${address}, a ${refused} address (refused; the operator's allow-list can allow it)`);
    }
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4, allowedByName };
}

/** Plain http is allowed only to hosts the operator allowed (by name, or an address in an allowed range). */
export function httpAllowed(url: URL, allowList: AllowList, target?: CheckedTarget): boolean {
  const host = hostOf(url);
  if (allowList.hosts.has(host)) return true;
  const address = ipaddr.isValid(host) ? host : target?.address;
  return address !== undefined && (inRanges(ipaddr.parse(address), allowList.ranges) || inRanges(ipaddr.process(address), allowList.ranges));
}
