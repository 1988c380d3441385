/**
 * WebFetch's SSRF floor: IP parsing (every IPv4 spelling `inet_aton` accepts, IPv6 with embedded IPv4), the
 * address ranges refused, and the domain allow list. Internal to `@terret/exec`.
 *
 * @module
 */

/** An IP address: 4 or 16 bytes. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/**
 * Parses an IPv4 literal in any spelling `inet_aton` (and the WHATWG URL parser) accepts: one to four parts, each
 * decimal, octal (`0` prefix) or hex (`0x`), the last part filling the remaining bytes (`127.1`, `2130706433`,
 * `0x7f000001`, `017700000001`). `undefined` when it is not one.
 */
export function parseIPv4(text: string): IpAddress | undefined {
  if (text === "" || text.length > 64) return undefined;
  const parts = text.replace(/\.$/, "").split(".");
  if (parts.length > 4) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(part)) {
      value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    } else if (/^0[0-7]+$/.test(part)) value = parseInt(part.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = parseInt(part, 10);
    else return undefined;
    if (!Number.isSafeInteger(value)) return undefined;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 256 ** (4 - values.length)) return undefined;
  const bytes = new Uint8Array(4);
  values.forEach((v, i) => (bytes[i] = v));
  for (let i = 3, rest = last; i >= values.length; i--, rest = Math.floor(rest / 256)) {
    bytes[i] = rest % 256;
  }
  return { family: 4, bytes };
}

/** Parses an IPv6 literal (brackets, a zone id and an embedded dotted IPv4 tail allowed). */
export function parseIPv6(text: string): IpAddress | undefined {
  let body = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  body = body.replace(/%.*$/, "");
  if (!body.includes(":") || body.length > 64) return undefined;
  let tail: number[] = [];
  const lastColon = body.lastIndexOf(":");
  const maybeV4 = body.slice(lastColon + 1);
  if (maybeV4.includes(".")) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(maybeV4)) return undefined;
    const v4 = maybeV4.split(".").map(Number);
    if (v4.some((n) => n > 255)) return undefined;
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    body = body.slice(0, lastColon + 1) + "0";
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const group = (part: string): number[] | undefined => {
    if (part === "") return [];
    const out: number[] = [];
    for (const piece of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined;
      out.push(parseInt(piece, 16));
    }
    return out;
  };
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  if (head === undefined || rest === undefined) return undefined;
  if (tail.length > 0) (rest.length > 0 ? rest : head).pop();
  const words = halves.length === 2
    ? [...head, ...new Array(8 - head.length - rest.length - tail.length).fill(0), ...rest, ...tail]
    : [...head, ...tail];
  if (words.length !== 8 || (halves.length === 2 && head.length + rest.length + tail.length > 7)) {
    return undefined;
  }
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return { family: 6, bytes };
}

/** Parses a host as an IP literal (IPv6 with or without brackets, then any IPv4 spelling). */
export function parseIp(host: string): IpAddress | undefined {
  return parseIPv6(host) ?? parseIPv4(host);
}

/** Formats an address (IPv6 uncompressed, lower case) for messages and for connecting. */
export function formatIp(address: IpAddress): string {
  if (address.family === 4) return [...address.bytes].join(".");
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) {
    words.push(((address.bytes[i]! << 8) | address.bytes[i + 1]!).toString(16));
  }
  return words.join(":");
}

type Range = readonly [prefix: string, bits: number, what: string];

/** Refused whatever the config says: loopback, unspecified, link-local (cloud metadata), multicast, reserved. */
const ALWAYS_V4: readonly Range[] = [
  ["0.0.0.0", 8, "unspecified (0.0.0.0/8)"],
  ["127.0.0.0", 8, "loopback (127.0.0.0/8)"],
  ["169.254.0.0", 16, "link-local (169.254.0.0/16, cloud metadata)"],
  ["224.0.0.0", 4, "multicast (224.0.0.0/4)"],
  ["240.0.0.0", 4, "reserved (240.0.0.0/4)"],
];
/** Refused while `block_private_ranges` is on (the default). */
const PRIVATE_V4: readonly Range[] = [
  ["10.0.0.0", 8, "private (10.0.0.0/8)"],
  ["172.16.0.0", 12, "private (172.16.0.0/12)"],
  ["192.168.0.0", 16, "private (192.168.0.0/16)"],
  ["100.64.0.0", 10, "shared address space (100.64.0.0/10)"],
  ["192.0.0.0", 24, "IETF protocol assignments (192.0.0.0/24)"],
  ["192.0.2.0", 24, "documentation (192.0.2.0/24)"],
  ["198.18.0.0", 15, "benchmarking (198.18.0.0/15)"],
  ["198.51.100.0", 24, "documentation (198.51.100.0/24)"],
  ["203.0.113.0", 24, "documentation (203.0.113.0/24)"],
];
const ALWAYS_V6: readonly Range[] = [
  ["::", 128, "unspecified (::)"],
  ["::1", 128, "loopback (::1)"],
  ["::ffff:0:0", 96, "IPv4-mapped (::ffff:0:0/96)"],
  ["::", 96, "IPv4-compatible (::/96)"],
  ["fe80::", 10, "link-local (fe80::/10)"],
  ["ff00::", 8, "multicast (ff00::/8)"],
];
const PRIVATE_V6: readonly Range[] = [
  ["fc00::", 7, "unique local (fc00::/7)"],
  ["fec0::", 10, "site-local (fec0::/10)"],
  ["2001:db8::", 32, "documentation (2001:db8::/32)"],
];

function inRange(address: IpAddress, [prefix, bits]: Range): boolean {
  const base = parseIp(prefix)!;
  if (base.family !== address.family) return false;
  for (let bit = 0; bit < bits; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((address.bytes[bit >> 3]! & mask) !== (base.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}

/**
 * Why the floor refuses `address`, or `undefined` when it may be reached. IPv6 forms that carry an IPv4 address
 * (NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that address too.
 */
export function refusal(address: IpAddress, blockPrivate: boolean): string | undefined {
  const lists = address.family === 4
    ? [ALWAYS_V4, ...(blockPrivate ? [PRIVATE_V4] : [])]
    : [ALWAYS_V6, ...(blockPrivate ? [PRIVATE_V6] : [])];
  for (const list of lists) {
    const hit = list.find((range) => inRange(address, range));
    if (hit !== undefined) return hit[2];
  }
  if (address.family === 6) {
    const embedded = inRange(address, ["64:ff9b::", 96, ""])
      ? address.bytes.subarray(12, 16)
      : inRange(address, ["2002::", 16, ""])
      ? address.bytes.subarray(2, 6)
      : undefined;
    if (embedded !== undefined) {
      const inner = refusal({ family: 4, bytes: embedded }, blockPrivate);
      if (inner !== undefined) return `${inner}, embedded in IPv6`;
    }
  }
  return undefined;
}

/** Names that mean this host whatever DNS says (RFC 6761). */
export function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || name === "localhost.localdomain";
}

/**
 * True when `host` is on the allow list: an entry equal to it (case-insensitive), `*.domain` for any subdomain of
 * `domain` (not `domain` itself), or `*` for any host.
 */
export function hostAllowed(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return patterns.some((raw) => {
    const pattern = raw.toLowerCase().replace(/\.$/, "");
    if (pattern === "*") return true;
    if (pattern.startsWith("*.")) {
      return name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1;
    }
    return name === pattern;
  });
}
