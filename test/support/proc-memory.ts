/**
 * Reads a live process's memory through /proc/<pid>/mem (Linux; the reader must be allowed to trace
 * it: the same user, its parent, or root) and says which of the needles occur in it. Every readable
 * mapping is read (the heap, the stacks, anonymous and file-backed pages), in chunks that overlap by
 * the longest needle so nothing straddling a chunk boundary is missed. Mappings the kernel refuses
 * (e.g. [vvar]) are skipped and counted.
 */
import { closeSync, openSync, readFileSync, readSync } from "node:fs";

export interface MemoryScan {
  /** Bytes read. */
  bytes: number;
  /** Readable mappings read, and those the kernel would not let us read. */
  regions: number;
  unreadable: number;
  /** Indexes (into the needles) of those found. */
  found: Set<number>;
}

const CHUNK = 16 * 1024 * 1024;

export function scanProcessMemory(pid: number, needles: readonly Buffer[]): MemoryScan {
  const maps = readFileSync(`/proc/${pid}/maps`, "utf8").split("\n").filter(Boolean);
  const overlap = Math.max(...needles.map((n) => n.length)) - 1;
  const fd = openSync(`/proc/${pid}/mem`, "r");
  const scan: MemoryScan = { bytes: 0, regions: 0, unreadable: 0, found: new Set() };
  const buf = Buffer.allocUnsafe(CHUNK + overlap);
  try {
    for (const line of maps) {
      const [range, perms] = line.split(/\s+/) as [string, string];
      if (!perms.startsWith("r")) continue;
      const [from, to] = range.split("-").map((h) => Number.parseInt(h, 16)) as [number, number];
      scan.regions++;
      let at = from;
      let carried = 0;
      try {
        while (at < to) {
          const want = Math.min(CHUNK, to - at);
          const got = readSync(fd, buf, carried, want, at);
          if (got <= 0) break;
          const view = buf.subarray(0, carried + got);
          needles.forEach((n, i) => {
            if (!scan.found.has(i) && view.indexOf(n) >= 0) scan.found.add(i);
          });
          scan.bytes += got;
          at += got;
          carried = Math.min(overlap, view.length);
          view.copy(buf, 0, view.length - carried);
        }
      } catch {
        scan.unreadable++;
      }
    }
  } finally {
    closeSync(fd);
  }
  return scan;
}
