/**
 * `npm run loadtest -- --perf-server` (sandbox/loadtest/perf-split.ts): each perf sample charged to the
 * part of the process that spent it, and the figures per request. The fixture is eight samples of
 * the webhook under load, one of each kind, as `perf script` printed them; the last test records a
 * live Node process with the real `perf` (skipped, saying so, where perf cannot record).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  chargeOf,
  PERF_NODE_ARGS,
  parsePerfScript,
  perfSplitText,
  perfUnavailable,
  recordPerf,
  runtimeCallOf,
  splitPerf,
} from "../../../sandbox/loadtest/perf-split.ts";

const FIXTURE = readFileSync(join(import.meta.dirname, "fixtures", "perf-script.txt"), "utf8");
/** Three samples inside calls into V8's runtime (the fixture's head says which). */
const RUNTIME_FIXTURE = readFileSync(
  join(import.meta.dirname, "fixtures", "perf-script-runtime.txt"),
  "utf8",
);
/** Where the webhook that was recorded ran from: its own JS files are under it. */
const RECORDED_ROOT = "/work/main";

describe("calls into V8's runtime, by the JS function that made them", () => {
  it("names the runtime function nearest the JS frame, and that frame's function and place", () => {
    const calls = parsePerfScript(RUNTIME_FIXTURE).map((s) => runtimeCallOf(s.frames, RECORDED_ROOT));
    expect(calls).toEqual([
      // The literal's define went through the runtime; its own callees (MigrateToMap...) are not named.
      "Runtime_DefineKeyedOwnPropertyInLiteral ← decide (src/quote/service.js:24:11)",
      // Builtins between the runtime and the JS frame (flat's) are passed over: the caller is ioredis'.
      "Runtime_CreateDataProperty ← Command (ioredis/built/Command.js:37:16)",
      "Runtime_KeyedStoreIC_Slow ← (anonymous) (src/swap/bounded.js:46:24)",
    ]);
  });

  it("finds none in samples that never enter the runtime", () => {
    for (const s of parsePerfScript(FIXTURE)) expect(runtimeCallOf(s.frames, RECORDED_ROOT)).toBeUndefined();
  });

  it("lists them per request in the report, under the parts", () => {
    const s = splitPerf(RUNTIME_FIXTURE, 1, "the webhook", RECORDED_ROOT);
    expect(s.runtimeCalls.map((r) => r.us)).toEqual([500.25, 500.25, 500.25]);
    const text = perfSplitText(s);
    const at = text.indexOf("  calls into V8's runtime (slow paths), by the JS function that made them:");
    expect(at).toBeGreaterThan(0);
    expect(text.slice(at + 1)).toContainEqual(
      expect.stringContaining("Runtime_CreateDataProperty ← Command (ioredis/built/Command.js:37:16)"),
    );
    // Under 0.05 µs per request they are left out, and so is the heading.
    expect(perfSplitText(splitPerf(RUNTIME_FIXTURE, 100_000, "w", RECORDED_ROOT)).join("\n")).not.toContain(
      "V8's runtime",
    );
  });
});

describe("perf split of recorded samples", () => {
  it("reads every sample with its period and its stack, leaf first, and skips the comment lines", () => {
    const samples = parsePerfScript(FIXTURE);
    expect(samples).toHaveLength(8);
    for (const s of samples) expect(s.periodNs).toBe(500_000);
    expect(samples[0]?.frames[0]).toEqual({ sym: "copy_iovec_from_user", dso: "[kernel.kallsyms]" });
    // A C++ symbol with parentheses of its own keeps them; the library in the last ones is the DSO.
    const cxx = samples[7]?.frames.find((f) => f.sym.includes("Parser::Proxy"));
    expect(cxx?.dso).toBe("/usr/bin/node");
    expect(cxx?.sym).toContain("(anonymous namespace)");
  });

  it("charges each sample to its system call, the collector, Node's C++ or its nearest JS frame's owner", () => {
    const charged = parsePerfScript(FIXTURE).map((s) => chargeOf(s.frames, RECORDED_ROOT));
    expect(charged).toEqual([
      { part: "kernel: writev (HTTP answers)" },
      { part: "kernel: write (Redis commands, other single writes)" },
      { part: "kernel: epoll" },
      { part: "V8 garbage collector" },
      { part: "JS: this repository", file: "src/http/native-quote.js" },
      // The leaf is a builtin; the nearest JS frame is ioredis' own, though the app's flush called it.
      { part: "JS: ioredis" },
      { part: "JS: Node core (http, streams, ticks, promises)" },
      { part: "Node and libuv C++ (no JS frame)" },
    ]);
  });

  it("a file outside the repository's root is not the repository's own JS", () => {
    const repo = parsePerfScript(FIXTURE)[4];
    expect(chargeOf(repo?.frames ?? [], "/somewhere/else")).toEqual({ part: "JS: other" });
  });

  it("gives each part as the samples' CPU over the requests, and its share", () => {
    const s = splitPerf(FIXTURE, 4, "the webhook", RECORDED_ROOT);
    expect(s.samples).toBe(8);
    // 8 samples of 0.5 ms over 4 requests: 1,000 µs per request, 125 µs and 12.5% per part.
    expect(s.totalUs).toBe(1000);
    expect(s.parts).toHaveLength(8);
    for (const p of s.parts) {
      expect(p.us).toBe(125);
      expect(p.share).toBe(0.125);
    }
    expect(s.appFiles).toEqual([{ part: "src/http/native-quote.js", us: 125, share: 0.125 }]);
    const text = perfSplitText(s);
    expect(text[0]).toBe("the webhook: 1000.0 µs of CPU per request sampled by perf (8 samples, 4 requests)");
    expect(text).toContain("  this repository's JS, by file:");
  });

  it("the report folds parts under 0.1 µs per request into one line", () => {
    const s = splitPerf(FIXTURE, 40_000, "w", RECORDED_ROOT); // 0.0125 µs each
    const text = perfSplitText(s);
    expect(text).toContain("  (8 more, each under 0.1 µs per request)");
  });
});

// A live process: a named JS function burning CPU, then plain write(2)s of 64 KiB to a file.
const BURNER = `
import { openSync, writeSync, ftruncateSync } from "node:fs";
const fd = openSync(process.argv[2], "w");
const buf = Buffer.alloc(65536, 1);
let x = 0;
function burnInJavaScript(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) for (let i = 0; i < 1000; i++) x = (x * 1103515245 + 12345) % 2147483648;
}
function writeInTheKernel(n) {
  for (let i = 0; i < n; i++) writeSync(fd, buf);
  ftruncateSync(fd, 0);
}
process.stdout.write("ready\\n");
for (;;) { burnInJavaScript(2); writeInTheKernel(40); }
`;

const unavailable = perfUnavailable();

describe.skipIf(unavailable !== undefined)(
  `perf record of a live process${unavailable ? ` (skipped: ${unavailable})` : ""}`,
  () => {
    const dir = mkdtempSync(join(tmpdir(), "perf-split-"));
    let child: ChildProcess | undefined;
    afterAll(() => {
      child?.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    });

    it("charges a JS loop to its file and write(2)s to the kernel's write, then removes the recording and the map file", async () => {
      writeFileSync(join(dir, "burn.mjs"), BURNER);
      child = spawn(process.execPath, [...PERF_NODE_ARGS, join(dir, "burn.mjs"), join(dir, "sink")], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve) => child?.stdout?.once("data", () => resolve()));
      const pid = child.pid as number;
      const dataPath = join(dir, "burn.perf.data");
      const s = await recordPerf([pid], {
        delayMs: 300,
        seconds: 2,
        dataPath,
        requests: 1000,
        label: "burner",
        repoRoot: dir,
      });
      const share = (part: string) => s.parts.find((p) => p.part === part)?.share ?? 0;
      expect(s.samples).toBeGreaterThan(500);
      expect(share("JS: this repository")).toBeGreaterThan(0.15);
      expect(s.appFiles[0]?.part).toBe("burn.mjs");
      expect(share("kernel: write (Redis commands, other single writes)")).toBeGreaterThan(0.05);
      expect(existsSync(dataPath)).toBe(false);
      expect(existsSync(`/tmp/perf-${pid}.map`)).toBe(false);
    }, 30_000);
  },
);
