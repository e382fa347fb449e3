/**
 * Small MaxMind DB (`.mmdb`) files for tests, written by the format's specification
 * (https://maxmind.github.io/MaxMind-DB/): a search tree of 24-bit records, over IPv6 with the IPv4
 * networks under `::/96` as MaxMind's own databases hold them, or over IPv4 only; a data section of
 * maps and strings; the metadata.
 */
import { isIP } from 'node:net';

/** What a network maps to: a string, or a map of them (`{ country: { iso_code: 'FR' } }`). */
export type MmdbValue = string | { readonly [key: string]: MmdbValue };

export interface MmdbOptions {
  /** The metadata's `database_type`, e.g. `GeoLite2-Country`. */
  databaseType: string;
  ipVersion?: 4 | 6;
  /** Networks in CIDR form (`81.2.69.0/24`, `2001:db8::/32`) and their data; none may hold another. */
  networks: { network: string; data: MmdbValue }[];
  built?: Date;
}

const METADATA_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');
const DATA_SECTION_SEPARATOR = 16;
const RECORD_BYTES = 3;

/** A node's two records: a node, a data offset (number) or nothing. */
interface TreeNode {
  records: [TreeNode | number | null, TreeNode | number | null];
}

export function writeMmdb({ databaseType, ipVersion = 6, networks, built = new Date() }: MmdbOptions): Buffer {
  const dataParts: Buffer[] = [];
  const dataOffsets = new Map<string, number>();
  let dataSize = 0;
  const root: TreeNode = { records: [null, null] };
  for (const { network, data } of networks) {
    const key = JSON.stringify(data);
    let offset = dataOffsets.get(key);
    if (offset === undefined) {
      const encoded = encode(data);
      offset = dataSize;
      dataOffsets.set(key, offset);
      dataParts.push(encoded);
      dataSize += encoded.length;
    }
    const [bits, prefix] = networkBits(network, ipVersion);
    let node = root;
    for (let depth = 0; depth < prefix - 1; depth++) {
      const next = node.records[bits[depth]!];
      if (typeof next === 'number') throw new Error(`${network} is inside another network`);
      node = next ?? (node.records[bits[depth]!] = { records: [null, null] });
    }
    node.records[bits[prefix - 1]!] = offset;
  }

  const order: TreeNode[] = [];
  const index = new Map<TreeNode, number>();
  const visit = (node: TreeNode): void => {
    index.set(node, order.push(node) - 1);
    for (const record of node.records) if (record !== null && typeof record !== 'number') visit(record);
  };
  visit(root);
  const nodeCount = order.length;
  const tree = Buffer.alloc(nodeCount * 2 * RECORD_BYTES);
  order.forEach((node, position) => {
    node.records.forEach((record, side) => {
      const value =
        record === null
          ? nodeCount
          : typeof record === 'number'
            ? nodeCount + DATA_SECTION_SEPARATOR + record
            : index.get(record)!;
      tree.writeUIntBE(value, (position * 2 + side) * RECORD_BYTES, RECORD_BYTES);
    });
  });

  const metadata = Buffer.concat([
    control(7, 9),
    ...entry('node_count', uint(6, 4, nodeCount)),
    ...entry('record_size', uint(5, 2, RECORD_BYTES * 8)),
    ...entry('ip_version', uint(5, 2, ipVersion)),
    ...entry('database_type', encode(databaseType)),
    ...entry('languages', control(11, 0)),
    ...entry('binary_format_major_version', uint(5, 2, 2)),
    ...entry('binary_format_minor_version', uint(5, 2, 0)),
    ...entry('build_epoch', uint(9, 8, Math.floor(built.getTime() / 1000))),
    ...entry('description', control(7, 0)),
  ]);
  return Buffer.concat([tree, Buffer.alloc(DATA_SECTION_SEPARATOR), ...dataParts, METADATA_MARKER, metadata]);
}

/** The address bits of a network (an IPv4 one under `::/96` in an IPv6 tree) and its prefix length there. */
function networkBits(network: string, ipVersion: 4 | 6): [number[], number] {
  const [address = '', length = ''] = network.split('/');
  const version = isIP(address);
  if (version === 0 || (version === 6 && ipVersion === 4)) throw new Error(`${network} cannot go in this tree`);
  const bytes = version === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
  const bits = bytes.flatMap((byte) => Array.from({ length: 8 }, (_, bit) => (byte >> (7 - bit)) & 1));
  const padding = version === 4 && ipVersion === 6 ? 96 : 0;
  return [[...Array<number>(padding).fill(0), ...bits], padding + Number(length)];
}

/** The 16 bytes of an IPv6 address written in hex groups (no dotted IPv4 tail). */
function ipv6Bytes(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const groups = (text: string): number[] => (text ? text.split(':').map((group) => parseInt(group, 16)) : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return all.flatMap((group) => [group >> 8, group & 0xff]);
}

/** A control byte: the type (an extended one, 8 and up, takes a second byte) and a size under 29. */
function control(type: number, size: number): Buffer {
  if (size >= 29) throw new Error('sizes of 29 and more are not written here');
  return type > 7 ? Buffer.from([size, type - 7]) : Buffer.from([(type << 5) | size]);
}

/** An unsigned integer of `bytes` bytes: uint16 (5), uint32 (6) or uint64 (9). */
function uint(type: number, bytes: number, value: number): Buffer {
  const number = Buffer.alloc(bytes);
  number.writeUIntBE(value, bytes - Math.min(bytes, 6), Math.min(bytes, 6));
  return Buffer.concat([control(type, bytes), number]);
}

function entry(key: string, value: Buffer): Buffer[] {
  return [encode(key), value];
}

function encode(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, text.length), text]);
  }
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([key, item]) => entry(key, encode(item)))]);
}
