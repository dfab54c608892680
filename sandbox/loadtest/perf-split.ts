/**
 * `npm run loadtest -- --perf-server`: where a server's CPU goes per request, the kernel included.
 *
 * V8's `--cpu-prof` sees only the main thread's JavaScript and counts the time the thread spends in
 * the kernel (a socket write that wakes another process, the read of a reply) as idle or as the JS
 * function that made the call. Linux `perf` samples the whole process, user and kernel alike. With
 * `--perf-basic-prof-only-functions` Node writes /tmp/perf-<pid>.map, which names the JIT's frames.
 *
 * Each sample is charged to one part of the process:
 *   - kernel, by the system call it is under: `writev` (Node's HTTP answers), `write` (single-buffer
 *     writes: on the webhook, its Redis commands), `read`, `epoll`, anything else;
 *   - V8's garbage collector, when no JavaScript frame is on the stack;
 *   - Node and libuv's own C++, when no JavaScript frame is on the stack;
 *   - else the nearest JavaScript frame's owner: Node's core (`node:` modules), a package under
 *     node_modules, or a file of this repository (dist/ and src/ paths alike).
 * A part's figure is the samples' CPU time over the requests the window carried: µs per request,
 * comparable with the load test's per-process CPU line.
 *
 * Apart from the parts, the samples inside a call from JavaScript into V8's runtime
 * (`v8::internal::Runtime_*`: a slow path, such as a property defined through the runtime because its
 * site went megamorphic, `Array.prototype.flat` appending, or `Date.now()`) are listed by the runtime
 * function and the JS function that made the call. Bare `node:http` makes almost none per request;
 * this list is how the quote path's conditional spreads and its per-quote timer lists were found
 * (docs/performance.md, _Calls into V8's runtime on the quote path_).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Node's flag that names JIT frames for perf (a map file per process, removed after the report). */
export const PERF_NODE_ARGS = ["--perf-basic-prof-only-functions"];

/** Why `perf` cannot record call graphs here, or undefined when it can (a one-off recording is tried). */
export function perfUnavailable(): string | undefined {
  const v = spawnSync("perf", ["--version"], { encoding: "utf8" });
  if (v.error || v.status !== 0)
    return "--perf-server: needs Linux perf on the PATH (Debian: apt-get install -y linux-perf)";
  const dir = mkdtempSync(join(tmpdir(), "perf-probe-"));
  try {
    const r = spawnSync("perf", ["record", "-q", "-g", "-o", join(dir, "probe.data"), "--", "true"], {
      encoding: "utf8",
    });
    if (r.status !== 0)
      return `--perf-server: perf cannot record here (kernel.perf_event_paranoid is ${paranoid()}; run as root or lower it): ${r.stderr.trim().slice(-300)}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return undefined;
}

function paranoid(): string {
  try {
    return readFileSync("/proc/sys/kernel/perf_event_paranoid", "utf8").trim();
  } catch {
    return "unknown";
  }
}

export interface PerfPart {
  part: string;
  /** CPU per request (µs). */
  us: number;
  /** Share of the process's sampled CPU. */
  share: number;
}

export interface PerfSplit {
  label: string;
  requests: number;
  samples: number;
  /** Every sample's CPU over the window, per request (µs). */
  totalUs: number;
  parts: PerfPart[];
  /** The JavaScript of this repository, file by file (the largest first). */
  appFiles: PerfPart[];
  /** Calls into V8's runtime, as "Runtime_X ← caller (where)" (the largest first). */
  runtimeCalls: PerfPart[];
}

interface Frame {
  sym: string;
  dso: string;
}

const HEADER = /:\s+(\d+)\s+[\w:-]+:\s*$/;
const FRAME = /^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\(([^)]*)\)\s*$/;

/** The samples of `perf script` output: each with its period (ns of CPU) and its stack, leaf first. */
export function parsePerfScript(text: string): { periodNs: number; frames: Frame[] }[] {
  const out: { periodNs: number; frames: Frame[] }[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((l) => l.trim() !== "");
    const head = lines[0];
    if (!head) continue;
    const period = HEADER.exec(head);
    if (!period) continue;
    const frames: Frame[] = [];
    for (const l of lines.slice(1)) {
      const m = FRAME.exec(l);
      if (m) frames.push({ sym: m[1] as string, dso: m[2] as string });
    }
    if (frames.length) out.push({ periodNs: Number(period[1]), frames });
  }
  return out;
}

const KERNEL_CALLS: [RegExp, string][] = [
  [/do_writev|__x64_sys_writev/, "kernel: writev (HTTP answers)"],
  [/ksys_write|__x64_sys_write\b/, "kernel: write (Redis commands, other single writes)"],
  [/ksys_read|__x64_sys_read\b/, "kernel: read"],
  [/do_epoll|ep_poll/, "kernel: epoll"],
];
const GC = /Heap::|Scavenger|MarkCompact|ConcurrentMarking|Sweeper|MinorMC/;

/** The part one sample is charged to, and the repository file when it is this repository's JS. */
export function chargeOf(frames: Frame[], repoRoot: string): { part: string; file?: string } {
  const leaf = frames[0] as Frame;
  if (leaf.dso.includes("kernel")) {
    for (const f of frames) for (const [re, part] of KERNEL_CALLS) if (re.test(f.sym)) return { part };
    return { part: "kernel: other (interrupts, scheduling, other calls)" };
  }
  const js = frames.find((f) => f.sym.startsWith("JS:"));
  if (!js) {
    return frames.some((f) => GC.test(f.sym))
      ? { part: "V8 garbage collector" }
      : { part: "Node and libuv C++ (no JS frame)" };
  }
  // "JS:*name file:///path/to/file.js:12:3" or "JS:~name node:_http_server:1026:26".
  const where = js.sym.slice(js.sym.lastIndexOf(" ") + 1).replace(/^file:\/\//, "");
  if (where.startsWith("node:")) return { part: "JS: Node core (http, streams, ticks, promises)" };
  const nm = where.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = where.slice(nm + "/node_modules/".length).split("/");
    const pkg = rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
    return { part: `JS: ${pkg}` };
  }
  if (where.startsWith(repoRoot)) {
    const file = where
      .slice(repoRoot.length)
      .replace(/^\/+/, "")
      .replace(/^dist\//, "")
      .replace(/:\d+:\d+$/, "");
    return { part: "JS: this repository", file };
  }
  return { part: "JS: other" };
}

const RUNTIME = /^v8::internal::Runtime_(\w+)/;

/** "name (where)" of a JS frame: repository files relative to it, packages from their folder. */
function jsFrameName(sym: string, repoRoot: string): string {
  // "JS:*name file:///path/to/file.js:12:3", "JS:^ /path/node_modules/pkg/x.js:1:2", "JS:~f node:events:1:2".
  const body = sym.slice(4);
  const at = body.lastIndexOf(" ");
  const name = (at >= 0 ? body.slice(0, at) : "") || "(anonymous)";
  let where = body.slice(at + 1).replace(/^file:\/\//, "");
  const nm = where.lastIndexOf("/node_modules/");
  if (nm >= 0) where = where.slice(nm + "/node_modules/".length);
  else if (where.startsWith(repoRoot))
    where = where
      .slice(repoRoot.length)
      .replace(/^\/+/, "")
      .replace(/^dist\//, "");
  return `${name} (${where})`;
}

/**
 * The call into V8's runtime a sample is inside, as "Runtime_X ← caller (where)", or undefined: the
 * runtime function nearest the JS frame that called it (a runtime function may call others), and
 * that JS frame.
 */
export function runtimeCallOf(frames: Frame[], repoRoot: string): string | undefined {
  let runtime: string | undefined;
  for (const f of frames) {
    if (f.sym.startsWith("JS:"))
      return runtime ? `Runtime_${runtime} ← ${jsFrameName(f.sym, repoRoot)}` : undefined;
    const m = RUNTIME.exec(f.sym);
    if (m) runtime = m[1];
  }
  return undefined;
}

/** `perf script` text of one window, split by part, per request. */
export function splitPerf(text: string, requests: number, label: string, repoRoot: string): PerfSplit {
  const samples = parsePerfScript(text);
  const parts = new Map<string, number>();
  const files = new Map<string, number>();
  const runtime = new Map<string, number>();
  let totalNs = 0;
  for (const s of samples) {
    totalNs += s.periodNs;
    const c = chargeOf(s.frames, repoRoot);
    parts.set(c.part, (parts.get(c.part) ?? 0) + s.periodNs);
    if (c.file) files.set(c.file, (files.get(c.file) ?? 0) + s.periodNs);
    const r = runtimeCallOf(s.frames, repoRoot);
    if (r) runtime.set(r, (runtime.get(r) ?? 0) + s.periodNs);
  }
  const rows = (m: Map<string, number>): PerfPart[] =>
    [...m]
      .map(([part, ns]) => ({ part, us: ns / 1e3 / requests, share: totalNs > 0 ? ns / totalNs : 0 }))
      .sort((a, b) => b.us - a.us);
  return {
    label,
    requests,
    samples: samples.length,
    totalUs: totalNs / 1e3 / requests,
    parts: rows(parts),
    appFiles: rows(files),
    runtimeCalls: rows(runtime),
  };
}

/**
 * Records `pids` (every thread of each) with `perf record -g` for `seconds`, starting after
 * `delayMs`, then reads the recording back. The recording and the processes' map files are removed
 * afterwards unless `keep`. `requests` is what the window carried (rate × seconds).
 */
export async function recordPerf(
  pids: number[],
  o: {
    delayMs: number;
    seconds: number;
    dataPath: string;
    requests: number;
    label: string;
    repoRoot: string;
    keep?: boolean;
  },
): Promise<PerfSplit> {
  await new Promise((r) => setTimeout(r, o.delayMs));
  const rec = await perf([
    "record",
    "-F",
    "999",
    "-g",
    "-p",
    pids.join(","),
    "-o",
    o.dataPath,
    "--",
    "sleep",
    String(o.seconds),
  ]);
  if (rec.code !== 0)
    throw new Error(`perf record failed (exit ${rec.code}): ${rec.stderr.trim().slice(-400)}`);
  // Not spawnSync: the load may still have answers in flight, and this process measures them.
  const script = await perf(["script", "-i", o.dataPath]);
  if (script.code !== 0) throw new Error(`perf script failed: ${script.stderr.trim().slice(-400)}`);
  if (!o.keep) {
    rmSync(o.dataPath, { force: true });
    for (const pid of pids) rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
  return splitPerf(script.stdout, o.requests, o.label, o.repoRoot);
}

/** Runs perf without blocking this event loop: its exit code (null if it could not start) and output. */
function perf(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("perf", args, { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", (e) => resolve({ code: null, stdout: "", stderr: e.message }));
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

/**
 * The report's lines for one split: parts of 0.1 µs per request or more, then the rest in one line;
 * the repository's files; the calls into V8's runtime of 0.05 µs per request or more.
 */
export function perfSplitText(s: PerfSplit, topFiles = 8, topRuntime = 10): string[] {
  const row = (p: PerfPart, indent: string) =>
    `${indent}${p.us.toFixed(1).padStart(6)} µs  ${(p.share * 100).toFixed(1).padStart(5)}%  ${p.part}`;
  const shown = s.parts.filter((p) => p.us >= 0.1);
  const runtime = s.runtimeCalls.filter((p) => p.us >= 0.05);
  const rest = s.parts.length - shown.length;
  return [
    `${s.label}: ${s.totalUs.toFixed(1)} µs of CPU per request sampled by perf (${s.samples} samples, ${s.requests} requests)`,
    ...shown.map((p) => row(p, "  ")),
    ...(rest > 0 ? [`  (${rest} more, each under 0.1 µs per request)`] : []),
    ...(s.appFiles.length
      ? ["  this repository's JS, by file:", ...s.appFiles.slice(0, topFiles).map((p) => row(p, "    "))]
      : []),
    ...(runtime.length
      ? [
          "  calls into V8's runtime (slow paths), by the JS function that made them:",
          ...runtime.slice(0, topRuntime).map((p) => row(p, "    ")),
        ]
      : []),
  ];
}
