/**
 * `npm run doctor`: is this maker ready to be registered, and what to fix if not.
 *
 * Checks: RPC reachable; maker SOL for fees; for every token an enabled pair trades (wrapped SOL
 * included) the mint (exists, program, decimals, no Token-2022 transfer fee) and the maker's ATA
 * (the operator's simulation fails without it, and the quotes are silently dropped) and its balance
 * against minInventory; Redis reachable (when configured); every pair's price fresh; the production
 * hazards (no API key, static prices, a keypair file others can read, the embedded ledger: FAIL unless
 * allowed by name, then warn), in production a missing ADMIN_API_KEY and a PUBLIC_BASE_URL unset
 * (warn) or not https (FAIL), unknown environment variables that look like ours, and the fill ledger
 * as `npm start` opens it (reached and migrated, the same code: src/wiring/startup-checks.ts). `--fix` creates
 * the missing ATAs, paid by the maker, after confirmation.
 */
import { createAssociatedTokenAccountIdempotentInstruction } from "@solana/spl-token";
import { PublicKey, TransactionMessage, VersionedTransaction } from "@solana/web3.js";
import { formatRatio } from "../../amounts/decimal.ts";
import type { Config } from "../../config/load.ts";
import type { TokenConfig } from "../../config/schema.ts";
import { readHoldings } from "../../inventory/holdings.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { Chain } from "../chain/interface.ts";
import type { OperatorSwapApi } from "../operator-api/interface.ts";
import type { RedisClient } from "../redis/client.ts";
import type { Signer } from "../signing/port.ts";
import type { StartCheck } from "../wiring/startup-checks.ts";

export type Status = "ok" | "warn" | "FAIL";

export interface Check {
  check: string;
  status: Status;
  detail: string;
  fix?: string;
}

export interface MissingAta {
  symbol: string;
  mint: PublicKey;
  ata: PublicKey;
  tokenProgram: PublicKey;
}

export interface DoctorDeps {
  config: Config;
  chain: Chain;
  signer: Signer;
  redis?: RedisClient;
  /** Started price sources. */
  sources: ReadonlyMap<string, PriceSource>;
  /** The operator's swap API (OPERATOR_API_URL), when the rebalancer is configured. */
  operatorApi?: OperatorSwapApi;
  /** The start's own ledger check (src/wiring/startup-checks.ts: checkStartLedger), already run. */
  ledger?: StartCheck;
  now?: () => number;
}

export interface Diagnosis {
  checks: Check[];
  missingAtas: MissingAta[];
  /** Lamports one token account's rent costs (for the --fix prompt). */
  ataRentLamports: bigint;
  healthy: boolean;
}

const SOL = 1_000_000_000n;
const sol = (lamports: bigint) => `${formatRatio({ num: lamports, den: SOL }, 4)} SOL`;

/** Runs every check; never throws for a failing dependency (that is a FAIL row). */
export async function diagnose(deps: DoctorDeps): Promise<Diagnosis> {
  const { config } = deps;
  const now = deps.now ?? Date.now;
  const maker = await makerChecks(deps, now);
  const checks: Check[] = [
    ...maker.checks,
    await redisCheck(deps),
    ...ledgerChecks(deps),
    ...priceChecks(deps, now),
    ...operationsChecks(config),
    ...hazardChecks(config),
    ...config.warnings.map((w): Check => ({ check: "environment", status: "warn", detail: w })),
  ];
  if (deps.operatorApi) checks.push(await operatorApiCheck(config, deps.operatorApi));
  const { missingAtas, ataRentLamports } = maker;
  return { checks, missingAtas, ataRentLamports, healthy: checks.every((c) => c.status !== "FAIL") };
}

/** The RPC, the maker's SOL and, for every traded token, its mint and the maker's ATA. */
async function makerChecks(
  deps: DoctorDeps,
  now: () => number,
): Promise<Pick<Diagnosis, "checks" | "missingAtas" | "ataRentLamports">> {
  const { config, chain, signer } = deps;
  const maker = signer.publicKey;
  const checks: Check[] = [];
  const missingAtas: MissingAta[] = [];
  let ataRentLamports = 0n;
  const rpcUp = await chain.ping().catch(() => false);
  checks.push(
    rpcUp
      ? { check: "RPC", status: "ok", detail: chain.description }
      : {
          check: "RPC",
          status: "FAIL",
          detail: `${chain.description} does not answer`,
          fix: "check RPC_URL",
        },
  );

  const traded = new Set(config.file.pairs.filter((p) => p.enabled).flatMap((p) => [p.base, p.quote]));
  const tokens = config.file.tokens.filter((t) => traded.has(t.symbol));
  const read = rpcUp ? await readHoldings(chain, maker, tokens, now) : undefined;
  if (read && !read.ok)
    checks.push({ check: "maker accounts", status: "FAIL", detail: read.error, fix: "check RPC_URL" });
  if (read?.ok) {
    const { holdings } = read;
    const min = BigInt(config.file.inventory.minSolLamports);
    checks.push(
      holdings.lamports >= min
        ? { check: "maker SOL", status: "ok", detail: `${maker.toBase58()} holds ${sol(holdings.lamports)}` }
        : {
            check: "maker SOL",
            status: "FAIL",
            detail: `${maker.toBase58()} holds ${sol(holdings.lamports)}, below ${sol(min)} (no quotes)`,
            fix: `send SOL to ${maker.toBase58()} (fees, ATA rent)`,
          },
    );
    ataRentLamports = await chain.getMinimumBalanceForRentExemption(165).catch(() => 2_039_280n);
    for (const t of tokens) {
      const h = holdings.tokens.get(t.mint) as NonNullable<ReturnType<typeof holdings.tokens.get>>;
      const label =
        t.mint === "So11111111111111111111111111111111111111112" ? `${t.symbol} (wSOL)` : t.symbol;
      if (h.problem && !h.problem.startsWith("ATA")) {
        checks.push({
          check: `mint ${label}`,
          status: "FAIL",
          detail: h.problem,
          fix: /transfer fee/.test(h.problem)
            ? `remove ${t.symbol} from the config: the order engine refuses transfer-fee mints`
            : `check tokens.${t.symbol} (mint, tokenProgram, decimals) in ${config.configPath}`,
        });
        continue;
      }
      checks.push({ check: `mint ${label}`, status: "ok", detail: `${t.mint} (${t.decimals} decimals)` });
      if (!h.ataExists) {
        missingAtas.push({
          symbol: t.symbol,
          mint: new PublicKey(t.mint),
          ata: h.ata,
          tokenProgram: new PublicKey(t.tokenProgram),
        });
        checks.push({
          check: `ATA ${label}`,
          status: "FAIL",
          detail: `missing: ${h.ata.toBase58()} (not advertised; the operator's simulation would fail)`,
          fix: `npm run doctor -- --fix (creates it, rent ${sol(ataRentLamports)})`,
        });
        continue;
      }
      if (h.problem) {
        checks.push({
          check: `ATA ${label}`,
          status: "FAIL",
          detail: `${h.ata.toBase58()}: ${h.problem}`,
          fix: "move funds to a healthy ATA",
        });
        continue;
      }
      const minInv = BigInt(t.minInventory);
      const amount = formatRatio({ num: h.amount, den: 10n ** BigInt(t.decimals) }, Math.min(t.decimals, 6));
      checks.push(
        h.amount >= minInv && h.amount > 0n
          ? { check: `ATA ${label}`, status: "ok", detail: `${h.ata.toBase58()} holds ${amount}` }
          : {
              check: `ATA ${label}`,
              status: "warn",
              detail: `${h.ata.toBase58()} holds ${amount}${h.amount < minInv ? `, below minInventory ${t.minInventory} (not advertised)` : " (cannot sell any)"}`,
              fix: `fund ${h.ata.toBase58()} with ${t.symbol}`,
            },
      );
    }
  }

  return { checks, missingAtas, ataRentLamports };
}

/** Redis: answers PING, or (unconfigured) fine outside production only. */
async function redisCheck(deps: DoctorDeps): Promise<Check> {
  if (deps.redis) {
    const up = await pingRedis(deps.redis);
    return up
      ? { check: "Redis", status: "ok", detail: "answers PING" }
      : {
          check: "Redis",
          status: "FAIL",
          detail: "does not answer PING within 2 s",
          fix: "check REDIS_URL and the server",
        };
  }
  return {
    check: "Redis",
    status: deps.config.mode === "production" ? "FAIL" : "ok",
    detail: "not configured: in-memory quote store and inventory (one instance only)",
  };
}

/** The start's own ledger check (already run), as a row. */
function ledgerChecks(deps: DoctorDeps): Check[] {
  const l = deps.ledger;
  if (!l) return [];
  return [
    l.ok
      ? { check: "fill ledger", status: "ok", detail: l.detail }
      : {
          check: "fill ledger",
          status: "FAIL",
          detail: `${l.problem} (npm start stops here)`,
          fix: `check ${l.setting}${l.setting === "DATABASE_URL" ? " and the PostgreSQL server" : ""}`,
        },
  ];
}

/** Every enabled pair's price: there, and fresh within its source's limit. */
function priceChecks(deps: DoctorDeps, now: () => number): Check[] {
  const checks: Check[] = [];
  for (const p of deps.config.file.pairs.filter((x) => x.enabled)) {
    const key = `${p.base}/${p.quote}`;
    const source = deps.sources.get(p.priceSource);
    const point = source?.price(key);
    const check = `price ${key}`;
    if (!source || !point) {
      checks.push({
        check,
        status: "FAIL",
        detail: `no price from source "${p.priceSource}"`,
        fix: "check the price source (see pricing/README.md)",
      });
      continue;
    }
    const age = now() - point.updatedAtMs;
    const fresh = age <= source.maxAgeMs;
    const ageText = Number.isFinite(source.maxAgeMs)
      ? `${age} ms old, limit ${source.maxAgeMs} ms`
      : "static";
    checks.push({
      check,
      status: fresh ? "ok" : "FAIL",
      detail: `${formatRatio(point.mid, 6)} from "${p.priceSource}" (${ageText})`,
      ...(fresh
        ? {}
        : { fix: `the "${p.priceSource}" source stopped updating ${key}: the pair answers 404` }),
    });
  }
  return checks;
}

/** Production hazards (config/safety.ts): the service refuses to start on each one not allowed. */
function hazardChecks(config: Config): Check[] {
  return config.hazards.map(
    (h): Check => ({
      check: `unsafe ${h.allowance
        .replace(/^ALLOW_/, "")
        .toLowerCase()
        .replaceAll("_", " ")}`,
      status: h.allowed ? "warn" : "FAIL",
      detail: h.allowed ? `${h.problem} (allowed by ${h.allowance}=1)` : h.problem,
      fix: h.allowed ? `unset ${h.allowance} once fixed` : h.fix,
    }),
  );
}

/**
 * What production needs beyond quoting: the admin API's key (switches, reports, taker lists) and the
 * public HTTPS address the operator is given (`npm run registration`). Flagged in production only.
 */
function operationsChecks(config: Config): Check[] {
  const production = config.mode === "production";
  const out: Check[] = [];
  out.push(
    config.env.ADMIN_API_KEY
      ? { check: "ADMIN_API_KEY", status: "ok", detail: "set: the admin API answers (X-ADMIN-API-KEY)" }
      : {
          check: "ADMIN_API_KEY",
          status: production ? "warn" : "ok",
          detail: "not set: no admin API (no pause switch over HTTP, no /admin/report, no taker lists)",
          fix: "set ADMIN_API_KEY (a long random string)",
        },
  );
  const url = config.env.PUBLIC_BASE_URL;
  const protocol = url ? safeProtocol(url) : undefined;
  out.push(
    !url
      ? {
          check: "PUBLIC_BASE_URL",
          status: production ? "warn" : "ok",
          detail: "not set: `npm run registration` prints the local address",
          fix: "set PUBLIC_BASE_URL to the https:// address the operator calls",
        }
      : protocol === "https:"
        ? { check: "PUBLIC_BASE_URL", status: "ok", detail: url }
        : {
            check: "PUBLIC_BASE_URL",
            status: production ? "FAIL" : "warn",
            detail: `${url} is not https: the operator calls its makers over HTTPS`,
            fix: "put the webhook behind TLS and set PUBLIC_BASE_URL to its https:// address",
          },
  );
  return out;
}

function safeProtocol(url: string): string | undefined {
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
}

/**
 * The operator's swap API answers a price-only order (no taker: nothing is built, nothing can trade)
 * for the first enabled pair with the configured key.
 */
async function operatorApiCheck(config: Config, api: OperatorSwapApi): Promise<Check> {
  const pair = (config.file.pairs.find((p) => p.enabled) ??
    config.file.pairs[0]) as Config["file"]["pairs"][number];
  // The configuration's load refuses a pair whose tokens are not configured.
  const base = config.tokensBySymbol.get(pair.base) as TokenConfig;
  const quote = config.tokensBySymbol.get(pair.quote) as TokenConfig;
  const r = await api.order({
    inputMint: quote.mint,
    outputMint: base.mint,
    amount: 10n ** BigInt(quote.decimals),
  });
  const check = "operator swap API";
  if (r.ok)
    return {
      check,
      status: "ok",
      detail: `order ${pair.quote}->${pair.base} answered (router ${r.order.router})`,
    };
  if (r.kind === "refused" && (r.status === 401 || r.status === 403))
    return { check, status: "FAIL", detail: `key refused: ${r.error}`, fix: "set OPERATOR_API_KEY" };
  if (r.kind === "refused")
    return {
      check,
      status: "warn",
      detail: `reachable, no order for ${pair.quote}->${pair.base}: ${r.error}`,
    };
  return { check, status: "FAIL", detail: `${r.kind}: ${r.error}`, fix: "check OPERATOR_API_URL" };
}

async function pingRedis(redis: RedisClient): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      redis.ping().then((r) => r === "PONG"),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), 2_000);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export type FixResult = { ok: true; signature: string } | { ok: false; error: string };

/** Creates the missing ATAs in one transaction paid and signed by the maker, and waits for it. */
export async function createMissingAtas(
  deps: Pick<DoctorDeps, "chain" | "signer">,
  missing: readonly MissingAta[],
  opts: { timeoutMs?: number; pollMs?: number } = {},
): Promise<FixResult> {
  const maker = deps.signer.publicKey;
  const instructions = missing.map((m) =>
    createAssociatedTokenAccountIdempotentInstruction(maker, m.ata, maker, m.mint, m.tokenProgram),
  );
  const { blockhash } = await deps.chain.getLatestBlockhash();
  const tx = new VersionedTransaction(
    new TransactionMessage({
      payerKey: maker,
      recentBlockhash: blockhash,
      instructions,
    }).compileToV0Message(),
  );
  try {
    await deps.signer.sign(tx);
  } catch (e) {
    // The signer service co-signs fills only: create the ATAs where the key is held.
    return { ok: false, error: `the maker key cannot sign this here: ${(e as Error).message}` };
  }
  const sent = await deps.chain.send(tx);
  if (!sent.ok) return { ok: false, error: sent.error };
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const s = await deps.chain.getSignatureStatus(sent.signature);
    if (s.state === "confirmed") return { ok: true, signature: sent.signature };
    if (s.state === "failed") return { ok: false, error: s.error };
    if (s.state === "expired") return { ok: false, error: "the transaction expired without landing" };
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 500));
  }
  return { ok: false, error: `not confirmed within the timeout (signature ${sent.signature})` };
}
