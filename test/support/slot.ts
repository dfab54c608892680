/**
 * The Redis Cluster slot of a key (CRC16/XMODEM of the key, or of its hash tag, mod 16384), as the
 * cluster specification defines it; test/redis/slots.test.ts checks it against a real cluster's
 * CLUSTER KEYSLOT.
 */
const TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ b) & 0xff] as number);
  return crc;
}

/** The part of `key` that is hashed: the first non-empty `{...}`, else the whole key. */
export function hashTag(key: string): string {
  const open = key.indexOf("{");
  if (open < 0) return key;
  const close = key.indexOf("}", open + 1);
  if (close <= open + 1) return key;
  return key.slice(open + 1, close);
}

export function keySlot(key: string): number {
  return crc16(new TextEncoder().encode(hashTag(key))) % 16_384;
}
