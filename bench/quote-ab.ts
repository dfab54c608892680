/**
 * Paired A/B of the quote path's CPU between two builds, in one process (`npm run bench:quote-ab`).
 *
 * On these machines the CPU a load test measures per quote moves by 25% or more between runs a minute
 * apart (the hypervisor's neighbours), so a change worth 2-5% cannot be seen by comparing two load
 * tests. Here both builds run in this one process, each composed as `npm start` composes it (its own
 * `dist/`, config and metrics; a throwaway Redis for both), and their operator listeners are driven
 * alternately in chunks of the load test's request mix: whatever the machine does, it does to both
 * within the same second, and the paired per-chunk ratio cancels it.
 *
 * What it measures: the listener's own work for POST /quote (auth, deadline and shedding, body
 * read, parse and validation, pricing, the store's put through the real Redis client, the answer's
 * serialisation, metrics), with Node's HTTP parser and socket writes left out (they are Node's, the
 * same in both builds). Process CPU per request (user + system), so the Redis client's socket work
 * counts.
 *
 *   npm run bench:quote-ab -- --base HEAD~3            # that commit against the working tree
 *   taskset -c 1 npm run bench:quote-ab -- --base main --api-key k   # pinned; with a key, as the operator sends
 *
 * `--base` is built in a temporary git worktree with this tree's node_modules; the working tree's
 * build is `dist/` (rebuilt first when stale). Each chunk takes the next requests of the one mix, so
 * both builds answer the same kinds of request in the same shares; their status counts are printed,
 * and a gap between them larger than the mix's own spread (a few per thousand) means the builds
 * answer differently and the figures compare different work.
 */
import { spawnSync } from "node:child_process";
import { EventEmitter } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../config/load.ts";
import { buildMix } from "../sandbox/loadtest/mix.ts";
import { parseArgs } from "../src/cli/args.ts";
import { REPO_ROOT, startRedis } from "../tooling/processes.ts";

const { values: args } = parseArgs(process.argv.slice(2), {
  command: "npm run bench:quote-ab",
  summary:
    "Paired A/B of the quote listener's CPU per request: a git ref's build against the working tree's,\n" +
    "in one process, driven alternately in chunks so that the machine's drift cancels.",
  flags: {
    base: { type: "string", value: "REF", description: "the git ref to compare against (required)" },
    rounds: { type: "string", value: "N", default: "40", description: "chunks per build" },
    chunk: { type: "string", value: "N", default: "4000", description: "requests per chunk" },
    concurrency: { type: "string", value: "N", default: "16", description: "requests in flight" },
    "api-key": { type: "string", value: "KEY", description: "API_KEY for both, sent as X-API-KEY" },
  },
});

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
interface Build {
  name: string;
  listener: Listener;
  path: string;
  statuses: Map<number, number>;
}

function run(cmd: string, argv: string[], cwd: string): void {
  const r = spawnSync(cmd, argv, { cwd, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} (in ${cwd}) exited ${r.status}`);
}

/** Composes one build's service from its own dist/ (its config, its metrics), on `redisUrl`. */
async function compose(name: string, root: string, redisUrl: string, apiKey?: string): Promise<Build> {
  const mod = (p: string) => import(pathToFileURL(join(root, "dist", p)).href);
  const load = await mod("config/load.js");
  const { composeService } = await mod("src/compose.js");
  const { requestListener } = await mod("src/http/listener.js");
  const { createLogger } = await mod("src/observability/logger.js");
  const { Metrics } = await mod("src/observability/metrics.js");
  const env = {
    LOG_LEVEL: "warn",
    LEDGER: "off",
    REDIS_URL: redisUrl,
    ...(apiKey ? { API_KEY: apiKey } : {}),
  };
  // As `npm start` loads it: that build's own default config file, under this environment.
  const config = load.loadConfig(env);
  const service = await composeService(config, {
    log: createLogger("warn"),
    metrics: new Metrics({ defaultMetrics: false }),
  });
  return {
    name,
    listener: requestListener(service.app),
    path: `${config.file.basePath}/quote`,
    statuses: new Map(),
  };
}

/** Node's IncomingMessage as the listener reads it: headers, then the body in one chunk. */
class MockRequest extends EventEmitter {
  readonly method = "POST";
  readableEnded = false;
  readonly headers: Record<string, string>;
  constructor(
    readonly url: string,
    body: Buffer,
    apiKey: string | undefined,
  ) {
    super();
    this.headers = {
      host: "127.0.0.1",
      connection: "keep-alive",
      "content-type": "application/json",
      "content-length": String(body.length),
      "x-request-timeout": "250",
      "x-request-start": String(Date.now()),
      ...(apiKey ? { "x-api-key": apiKey } : {}),
    };
    queueMicrotask(() => {
      this.emit("data", body);
      this.readableEnded = true;
      this.emit("end");
    });
  }
}

/** ServerResponse as the quote listener writes it: writeHead, then end with the body. */
class MockResponse {
  private status = 0;
  constructor(private readonly done: (status: number) => void) {}
  writeHead(status: number): this {
    this.status = status;
    return this;
  }
  setHeader(): void {}
  end(): void {
    this.done(this.status);
  }
}

async function main(): Promise<void> {
  if (!args.base) throw new Error("--base REF: the git ref to compare the working tree against");
  const rounds = Number(args.rounds);
  const chunk = Number(args.chunk);
  const concurrency = Number(args.concurrency);
  const apiKey = args["api-key"];

  run("node", ["scripts/build.mjs", "--if-stale"], REPO_ROOT);
  const worktree = mkdtempSync(join(tmpdir(), "quote-ab-"));
  const redis = await startRedis();
  try {
    run("git", ["worktree", "add", "--detach", "--force", worktree, args.base], REPO_ROOT);
    if (!existsSync(join(worktree, "node_modules")))
      symlinkSync(join(REPO_ROOT, "node_modules"), join(worktree, "node_modules"));
    run("node", ["scripts/build.mjs"], worktree);

    const a = await compose(`base (${args.base})`, worktree, redis.url, apiKey);
    const b = await compose("working tree", REPO_ROOT, redis.url, apiKey);
    const file = parseFileConfig(JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, "utf8")));
    const mix = buildMix(file, 20_000).map((m) => m.body.toString("utf8"));
    const salt = Math.random().toString(36).slice(2, 8);
    let seq = 0;
    // Each request its own quoteId, as the load test sends them.
    const nextBody = () => {
      const i = seq++;
      return Buffer.from(
        (mix[i % mix.length] as string).replace(/"quoteId":"[^"]+"/, `"quoteId":"ab-${salt}-${i}"`),
      );
    };

    /** CPU per request (µs) over one chunk of requests through `t`'s listener. */
    const runChunk = async (t: Build): Promise<number> => {
      let left = chunk;
      const before = process.cpuUsage();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (left-- > 0) {
            await new Promise<void>((resolve) =>
              t.listener(
                new MockRequest(t.path, nextBody(), apiKey) as unknown as IncomingMessage,
                new MockResponse((status) => {
                  t.statuses.set(status, (t.statuses.get(status) ?? 0) + 1);
                  resolve();
                }) as unknown as ServerResponse,
              ),
            );
          }
        }),
      );
      const used = process.cpuUsage(before);
      return (used.user + used.system) / chunk;
    };

    for (let i = 0; i < 4; i++) {
      await runChunk(a);
      await runChunk(b);
    }
    a.statuses.clear();
    b.statuses.clear();
    const ua: number[] = [];
    const ub: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // Alternate which goes first, so that neither always runs right after a collection the other caused.
      if (i % 2 === 0) {
        ua.push(await runChunk(a));
        ub.push(await runChunk(b));
      } else {
        ub.push(await runChunk(b));
        ua.push(await runChunk(a));
      }
    }
    const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
    const ratios = ua.map((v, i) => (ub[i] as number) / v).sort((x, y) => x - y);
    const at = (q: number) => (ratios[Math.floor(q * (ratios.length - 1))] as number).toFixed(3);
    const counts = (t: Build) =>
      [...t.statuses]
        .sort(([x], [y]) => x - y)
        .map(([s, n]) => `${s}: ${n}`)
        .join(", ");
    console.log(
      [
        `quote listener, CPU per request (user + system), ${rounds} chunks of ${chunk} each, ${concurrency} in flight${apiKey ? ", with an API key" : ""}:`,
        `  A ${a.name}: ${mean(ua).toFixed(2)} µs   (answers ${counts(a)})`,
        `  B ${b.name}: ${mean(ub).toFixed(2)} µs   (answers ${counts(b)})`,
        `  B / A: ${(mean(ub) / mean(ua)).toFixed(3)} over the run; paired by chunk: median ${at(0.5)}, quartiles ${at(0.25)}-${at(0.75)}`,
      ].join("\n"),
    );
  } finally {
    spawnSync("git", ["worktree", "remove", "--force", worktree], { cwd: REPO_ROOT });
    rmSync(worktree, { recursive: true, force: true });
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
