/**
 * The sandbox stack: the local chain server (`npm run chain`'s entry point, seeded from a file this
 * module writes), the webhook (`npm start`'s entry point, Redis-backed, RPC_URL at the local chain,
 * production mode with the sandbox's maker key), and the operator simulator (in this process),
 * registered with the webhook. Used by `npm run sandbox`, `npm run demo` and `npm run loadtest`.
 * With `remoteSigner` the maker key (and the issuer key, with `issuedToken`) goes to the signer service
 * instead (`npm run signer`'s entry point, on a Unix socket in the stack's folder) and the webhook gets
 * SIGNER_URL and no key.
 *
 * Each child runs in its own process and logs to a file in the stack's folder; everything listens on
 * 127.0.0.1 only.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { Keypair, type PublicKey } from "@solana/web3.js";
import { DEFAULT_CONFIG_PATH, parseFileConfig } from "../../config/load.ts";
import type { FileConfig } from "../../config/schema.ts";
import { STAND_IN_POOL_AUTHORITY } from "../../src/chain/local/rfq-v2-emulation.ts";
import { RpcChain } from "../../src/chain/rpc.ts";
import { rpcCall } from "../../src/chain/rpc-read.ts";
import { DEFAULT_SHUTDOWN_GRACE_MS } from "../../src/http/shutdown.ts";
import { loadOrCreateKeypair } from "../../src/signing/keypair.ts";
import {
  type Child,
  freePort,
  spawnBuiltWebhook,
  spawnTs,
  startRedis,
  waitForHttp,
} from "../../tooling/processes.ts";
import { smartAccountConfig } from "../fill/smart-account.ts";
import { RfqV2StandIn, STAND_IN_POOL_FUNDS } from "../rfq-v2/server.ts";
import { type IssuedToken, withIssuedToken } from "./issued-token.ts";
import { operatorChainOverRpc } from "./rpc-chain.ts";
import { type OperatorServer, type OperatorServerOptions, startOperator } from "./server.ts";

export interface TakerSpec {
  name: string;
  /** Lamports. */
  sol: bigint;
  /** Smallest units by token symbol; 0 creates an empty account. */
  tokens: Record<string, bigint>;
}

export interface StackOptions {
  /** Folder for keys, the chain seed, logs and the manifest. */
  dir: string;
  /** Fixed ports (sandbox); 0 or absent picks free ones. */
  ports?: { chain?: number; webhook?: number; webhookAdmin?: number; operator?: number; rfqV2?: number };
  takers: TakerSpec[];
  /** Maker inventory by symbol (smallest units); defaults to plenty of everything. */
  makerInventory?: Record<string, bigint>;
  webhookLogLevel?: string;
  /** The webhook's API key (the operator is registered with it). */
  webhookApiKey?: string;
  webhookNodeArgs?: string[];
  /**
   * Run the webhook as `npm start` does (`dist/src/main.js`, built when stale) instead of from source
   * under tsx; the load test's default, so that it measures what is deployed.
   */
  webhookBuilt?: boolean;
  /** More environment for the webhook (e.g. WORKERS, LEDGER). */
  webhookEnv?: Record<string, string>;
  /**
   * Webhook processes (instances behind a load balancer), each on its own ports, sharing Redis and the
   * chain; the operator is registered with the first. Default 1.
   */
  webhookInstances?: number;
  /** The webhook's ADMIN_API_KEY (unset: no admin API). */
  webhookAdminApiKey?: string;
  /**
   * Seed nodes of a Redis Cluster ("host:port,..."): the webhook runs on it (REDIS_CLUSTER_NODES)
   * instead of a single node. Default: the REDIS_CLUSTER_NODES environment variable, else a single
   * node (REDIS_URL or a throwaway redis-server).
   */
  redisClusterNodes?: string;
  /**
   * A throwaway redis-server on a unix socket, even when REDIS_URL is set (not with a cluster): the
   * webhook gets `REDIS_URL=unix:///.../redis.sock`, as a maker running Redis beside it on one host would.
   */
  redisSocket?: boolean;
  /**
   * A throwaway redis-server over loopback TCP even when REDIS_URL is set (not with a cluster): for a
   * stack that flips the shared switches (pause, pair switches) other stacks on REDIS_URL would obey.
   */
  ownRedis?: boolean;
  /** Called as soon as each child process is spawned (tests watch a process from its first instant). */
  onSpawn?: (child: Child) => void;
  /** Run the signer service as its own process and the webhook without key material (SIGNER_URL). */
  remoteSigner?: boolean;
  operator?: Partial<Omit<OperatorServerOptions, "chain" | "webhooks">>;
  /**
   * Adds a permissioned token the maker issues (sandbox/operator/issued-token.ts): TBILL, a Token-2022
   * mint whose mint authority is the issuer key (`<dir>/issuer-keypair.json`, given to the webhook as
   * ISSUER_KEYPAIR), minted just in time for a buy and burned for a sell, with the stack's takers as
   * its allowed holders. The stack then runs on `<dir>/config.json` (the configuration plus TBILL).
   */
  issuedToken?: boolean;
  /**
   * Adds a taker that is a smart account (Squads): two members (`<dir>/smart-account-<name>-member-
   * <i>-keypair.json`, 1 SOL each: they sign and the first pays the fees), a settings account, and its
   * vault funded as `sol` and `tokens` say. The operator wraps its orders' fills as the toolkit does.
   */
  smartAccountTaker?: TakerSpec;
  /**
   * Runs the stand-in of the operator's RFQ v2 service (sandbox/rfq-v2/server.ts) in this process and
   * streams every enabled pair's levels to it (RFQ_V2_URL and `rfqV2.pairs`); swaps offered on them land
   * on the local chain. With `remoteSigner` the signer service judges and signs them.
   */
  rfqV2?: boolean;
  /**
   * With `rfqV2`: the stand-in serves TLS with this certificate and key (PEM files), and the webhook's
   * gRPC client trusts `ca` (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, the roots file grpc-js reads in place of
   * Node's), as a maker behind its own CA would.
   */
  rfqV2Tls?: { cert: string; key: string; ca: string };
  /** Progress lines. */
  say?: (line: string) => void;
}

export interface StackTaker {
  name: string;
  keypair: Keypair;
  keypairPath: string;
}

export interface Stack {
  dir: string;
  config: FileConfig;
  chainUrl: string;
  /** The block engine's base URL (BUNDLE_URL): the chain server answers Jito's API under /api/v1. */
  bundleUrl: string;
  /** The base URL the operator calls (includes the configured basePath). */
  webhookUrl: string;
  /** Every instance's base URL (the first is `webhookUrl`). */
  webhookUrls: string[];
  /** The webhook's root on the operator's listener (health, ready). */
  webhookRoot: string;
  /** The webhook's operations listener (metrics, admin, health, ready). */
  webhookAdminUrl: string;
  /** The first webhook's environment (what the ops commands are run with, as the runbook says). */
  webhookEnv: Record<string, string>;
  operatorUrl: string;
  operator: OperatorServer;
  maker: string;
  takers: StackTaker[];
  /** The permissioned token the maker issues, with `issuedToken`. */
  issued?: IssuedToken;
  /** The RFQ v2 stand-in and the maker's id there, with `rfqV2`. */
  rfqV2?: { url: string; makerId: string; standIn: RfqV2StandIn };
  /** The smart-account taker, with `smartAccountTaker`: its vault is the taker, its members sign. */
  smartAccount?: { name: string; vault: PublicKey; settings: PublicKey; members: Keypair[] };
  redis: string;
  /** The signer service's URL (unix://...) when `remoteSigner` is set. */
  signerUrl?: string;
  children: Child[];
  pids: Record<string, number | undefined>;
  close(): Promise<void>;
  /** SIGKILLs the webhook process (no shutdown of any kind); resolves once it is gone. */
  killWebhook(): Promise<void>;
  /** Starts the webhook again with the same settings, ports and data folder; resolves once ready. */
  startWebhook(): Promise<void>;
  /**
   * Stops the webhook gracefully (SIGTERM; SIGKILL only past its own SHUTDOWN_GRACE_MS): its embedded
   * ledger is closed, e.g. for `npm run report`. Resolves with how it exited (code 0: a clean shutdown).
   */
  stopWebhook(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * With `remoteSigner`: stops the signer service with `signal` (no grace) and starts it again on the
   * same socket; resolves once it listens.
   */
  restartSigner(signal: NodeJS.Signals): Promise<void>;
}

/**
 * How long a webhook gets between SIGTERM and SIGKILL: its own shutdown (SHUTDOWN_DRAIN_MS, then
 * requests in flight, the ledger writer's last pass, the embedded ledger closed) is bounded by its
 * SHUTDOWN_GRACE_MS, so a little more than that. A shorter wait SIGKILLed it inside its 5 s drain.
 */
function webhookStopGraceMs(env: Record<string, string>): number {
  const grace = Number(env.SHUTDOWN_GRACE_MS ?? process.env.SHUTDOWN_GRACE_MS) || DEFAULT_SHUTDOWN_GRACE_MS;
  return grace + 5_000;
}

/**
 * Ten thousand whole units of every token by default: far more than any demo or load test moves. None
 * of a token the maker issues: it is minted just in time.
 */
function defaultInventory(config: FileConfig): Record<string, bigint> {
  return Object.fromEntries(
    config.tokens
      .filter((t) => !config.issuance[t.symbol])
      .map((t) => [t.symbol, 10_000_000n * 10n ** BigInt(t.decimals)]),
  );
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const say = opts.say ?? (() => {});
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const baseConfigPath = process.env.CONFIG || DEFAULT_CONFIG_PATH;
  const baseConfig = parseFileConfig(JSON.parse(readFileSync(baseConfigPath, "utf8")), baseConfigPath);
  let configPath = baseConfigPath;
  let config = baseConfig;

  const closers: (() => Promise<void>)[] = [];
  const children: Child[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => {});
  };

  try {
    const makerPath = join(dir, "maker-keypair.json");
    const maker = loadOrCreateKeypair(makerPath).keypair;
    const takers: StackTaker[] = opts.takers.map((t) => {
      const keypairPath = join(dir, `taker-${t.name}-keypair.json`);
      return { name: t.name, keypair: loadOrCreateKeypair(keypairPath).keypair, keypairPath };
    });
    let issued: IssuedToken | undefined;
    if (opts.issuedToken) {
      const made = withIssuedToken(baseConfig, {
        dir,
        holders: takers.map((t) => t.keypair.publicKey),
        // The signer service signs fills only; a burn is signed by the maker key (src/issuance/issuer.ts).
        burnOnSell: !opts.remoteSigner,
      });
      issued = made.issued;
      config = made.config;
      configPath = join(dir, "config.json");
      writeFileSync(configPath, JSON.stringify(config, null, 2));
    }

    if (opts.rfqV2) {
      config = {
        ...config,
        rfqV2: {
          ...config.rfqV2,
          pairs: config.pairs.filter((p) => p.enabled).map((p) => `${p.base}/${p.quote}`),
        },
      };
      configPath = join(dir, "config.json");
      writeFileSync(configPath, JSON.stringify(config, null, 2));
    }

    const sat = opts.smartAccountTaker;
    const smartAccount = sat
      ? (() => {
          const memberPaths = [0, 1].map((i) =>
            join(dir, `smart-account-${sat.name}-member-${i}-keypair.json`),
          );
          const members = memberPaths.map((p) => loadOrCreateKeypair(p).keypair);
          const settings = loadOrCreateKeypair(join(dir, `smart-account-${sat.name}-settings-keypair.json`))
            .keypair.publicKey;
          const account = smartAccountConfig(
            settings,
            members.map((m) => m.publicKey),
          );
          return { name: sat.name, vault: account.vault, settings, members, memberPaths, account };
        })()
      : undefined;
    const chainPort = opts.ports?.chain || (await freePort());
    const inventory = opts.makerInventory ?? defaultInventory(config);
    const seed = {
      host: "127.0.0.1",
      port: chainPort,
      slotMs: 400,
      blockhashValidity: 150,
      maker: {
        keypair: makerPath,
        sol: "1000000000000",
        inventory: Object.fromEntries(Object.entries(inventory).map(([k, v]) => [k, v.toString()])),
      },
      ...(issued ? { issuer: { keypair: issued.issuerPath, sol: "100000000000" } } : {}),
      takers: opts.takers
        .map((t, i): { keypair?: string; pubkey?: string; sol: string; tokens: Record<string, string> } => ({
          keypair: (takers[i] as StackTaker).keypairPath,
          sol: t.sol.toString(),
          tokens: Object.fromEntries(Object.entries(t.tokens).map(([k, v]) => [k, v.toString()])),
        }))
        .concat(
          (smartAccount?.memberPaths ?? []).map((keypair) => ({ keypair, sol: "1000000000", tokens: {} })),
        )
        // The local chain's stand-in AMM pool, which the RFQ v2 stand-in's two-leg swaps route through.
        .concat(
          opts.rfqV2
            ? [{ pubkey: STAND_IN_POOL_AUTHORITY.toBase58(), sol: "0", tokens: STAND_IN_POOL_FUNDS }]
            : [],
        ),
      ...(smartAccount && sat
        ? {
            smartAccounts: [
              {
                settings: smartAccount.settings.toBase58(),
                members: smartAccount.members.map((m) => m.publicKey.toBase58()),
                sol: sat.sol.toString(),
                tokens: Object.fromEntries(Object.entries(sat.tokens).map(([k, v]) => [k, v.toString()])),
              },
            ],
          }
        : {}),
    };
    const seedPath = join(dir, "chain-seed.json");
    writeFileSync(seedPath, JSON.stringify(seed, null, 2));

    const clusterNodes = opts.redisClusterNodes ?? process.env.REDIS_CLUSTER_NODES;
    const redis = clusterNodes
      ? { url: `cluster ${clusterNodes}`, owned: false, stop: async () => {} }
      : await startRedis({ socket: opts.redisSocket === true, own: opts.ownRedis === true });
    closers.push(redis.stop);
    const redisEnv: Record<string, string> = clusterNodes
      ? { REDIS_URL: "", REDIS_CLUSTER_NODES: clusterNodes }
      : { REDIS_URL: redis.url, REDIS_CLUSTER_NODES: "" };

    const chain = spawnTs(
      "chain",
      "sandbox/chain/main.ts",
      { CHAIN_SEED: seedPath, CONFIG: configPath },
      join(dir, "chain.log"),
    );
    children.push(chain);
    opts.onSpawn?.(chain);
    closers.push(chain.stop);
    const chainUrl = `http://127.0.0.1:${chainPort}`;
    await readyOrWhy(waitForHttp(`${chainUrl}/health`, chain), chain);
    say(`chain     ${chainUrl}  (log ${chain.logPath})`);

    let signer: Child | undefined;
    let restartSigner: Stack["restartSigner"] = async () => {
      throw new Error("restartSigner: the stack runs no signer service (remoteSigner)");
    };
    let signerUrl: string | undefined;
    let signerLimits: string | undefined;
    if (opts.remoteSigner) {
      const socketPath = join(dir, "signer.sock");
      const limitsPath = join(dir, "signer-limits.json");
      signerLimits = limitsPath;
      // Generous for the sandbox: its limits are exercised by the signer's own tests. Its own prices
      // are a copy of the configuration's static ones (a real signer names a source of its own), with
      // a 1% band around each.
      const generous = { perFill: "1000000", perMinute: "1000000", perDay: "1000000", lossPerDay: "1000000" };
      const prices: Record<string, string> = {};
      for (const source of Object.values(config.priceSources))
        if (source.kind === "static") Object.assign(prices, source.prices);
      const pairs = Object.fromEntries(
        config.pairs
          .map((p) => `${p.base}/${p.quote}`)
          .filter((pair) => prices[pair])
          .map((pair) => [pair, { priceSource: "signer", bandBps: 100 }]),
      );
      writeFileSync(
        signerLimits,
        JSON.stringify(
          { tokens: { "*": generous }, priceSources: { signer: { kind: "static", prices } }, pairs },
          null,
          2,
        ),
      );
      const spawnSigner = () =>
        spawnTs(
          "signer",
          "src/signer/main.ts",
          {
            SIGNER_KEYPAIR: makerPath,
            SIGNER_SOCKET: socketPath,
            SIGNER_LIMITS: limitsPath,
            // Its own chain reader: blockhash validity and the lookup tables of RFQ v2 swaps.
            SIGNER_RPC_URL: chainUrl,
            // The issuer key is the signer's too: the webhook then holds no key of any kind.
            ...(issued ? { SIGNER_ISSUER_KEYPAIR: issued.issuerPath } : {}),
            ...redisEnv,
            CONFIG: configPath,
            LOG_LEVEL: "info",
          },
          join(dir, "signer.log"),
        );
      signer = spawnSigner();
      children.push(signer);
      opts.onSpawn?.(signer);
      closers.push(() => signer?.stop() ?? Promise.resolve());
      await readyOrWhy(waitForSocket(socketPath, signer), signer);
      restartSigner = async (signal) => {
        const old = signer as Child;
        if (old.proc.exitCode === null && old.proc.signalCode === null) {
          const exited = new Promise<void>((r) => old.proc.once("exit", () => r()));
          old.proc.kill(signal);
          await exited;
        }
        signer = spawnSigner();
        children.push(signer);
        await readyOrWhy(waitForSocket(socketPath, signer), signer);
      };
      signerUrl = `unix://${socketPath}`;
      say(`signer    ${signerUrl}  (maker key, log ${signer.logPath})`);
    }

    let rfqV2: Stack["rfqV2"];
    if (opts.rfqV2) {
      const rpc = new RpcChain({ urls: [chainUrl], timeoutMs: 5_000 });
      const makerId = "sandbox-maker";
      // The operator's payer for the lookup tables its swaps load from (the local chain airdrops).
      const tablePayer = Keypair.generate();
      await rpcCall(chainUrl, "requestAirdrop", [tablePayer.publicKey.toBase58(), 1_000_000_000], 5_000);
      const standIn = new RfqV2StandIn({
        makers: [{ makerId, token: `sandbox-${randomUUID()}` }],
        recentBlockhash: async () => (await rpc.getLatestBlockhash()).blockhash,
        tables: { chain: rpc, payer: tablePayer },
        land: async (tx) => {
          const sent = await rpc.send(tx);
          if (!sent.ok) throw new Error(sent.error);
          for (const until = Date.now() + 20_000; Date.now() < until; ) {
            const status = await rpc.getSignatureStatus(sent.signature);
            if (status.state === "confirmed") return sent.signature;
            if (status.state === "failed") throw new Error(`failed: ${status.error}`);
            await new Promise((r) => setTimeout(r, 200));
          }
          throw new Error(`${sent.signature} not confirmed within 20 s`);
        },
        ...(opts.rfqV2Tls
          ? { tls: { cert: readFileSync(opts.rfqV2Tls.cert), key: readFileSync(opts.rfqV2Tls.key) } }
          : {}),
      });
      const url = await standIn.listen("127.0.0.1", opts.ports?.rfqV2 ?? 0);
      closers.push(async () => {
        await standIn.close();
        await rpc.close();
      });
      rfqV2 = { url, makerId, standIn };
      say(`rfq v2    ${url}  (the operator's RFQ v2 service, stand-in; maker id ${makerId})`);
    }

    const instances = Math.max(1, opts.webhookInstances ?? 1);
    // Each instance can be killed and started again (the same settings, ports, data folder and log).
    const spawnWebhook = (name: string, env: Record<string, string>): Child => {
      const logPath = join(dir, `${name}.log`);
      const nodeArgs = opts.webhookNodeArgs ?? [];
      const child = opts.webhookBuilt
        ? spawnBuiltWebhook(name, env, logPath, nodeArgs)
        : spawnTs(name, "src/main.ts", env, logPath, [], nodeArgs);
      opts.onSpawn?.(child);
      return child;
    };
    const webhooks: {
      child: Child;
      root: string;
      url: string;
      adminUrl: string;
      env: Record<string, string>;
    }[] = [];
    for (let n = 1; n <= instances; n++) {
      const webhookPort = (n === 1 && opts.ports?.webhook) || (await freePort());
      const webhookAdminPort = (n === 1 && opts.ports?.webhookAdmin) || (await freePort());
      const name = n === 1 ? "webhook" : `webhook${n}`;
      const env: Record<string, string> = {
        HOST: "127.0.0.1",
        PORT: String(webhookPort),
        ADMIN_HOST: "127.0.0.1",
        ADMIN_PORT: String(webhookAdminPort),
        // A paper deployment in production shape: the shipped static prices, and no key unless given.
        ALLOW_STATIC_PRICES: "1",
        // Its books are the throwaway embedded ledger in the stack's own folder.
        ALLOW_EMBEDDED_LEDGER: "1",
        ...redisEnv,
        RPC_URL: chainUrl,
        // The chain server is also the block engine (Jito's API over the local bundle engine).
        BUNDLE_URL: chainUrl,
        // With the remote signer the webhook gets no key setting at all (an inherited one is blanked).
        ...(signerUrl ? { SIGNER_URL: signerUrl, MAKER_KEYPAIR: "" } : { MAKER_KEYPAIR: makerPath }),
        DATA_DIR: join(dir, n === 1 ? "webhook-data" : `${name}-data`),
        ...(issued && !signerUrl ? { ISSUER_KEYPAIR: issued.issuerPath } : { ISSUER_KEYPAIR: "" }),
        LOG_LEVEL: opts.webhookLogLevel ?? "info",
        CONFIG: configPath,
        ACCEPTANCE_MODE: "0",
        // One process unless asked (the embedded ledger in DATA_DIR is single-process).
        WORKERS: "1",
        ...(opts.webhookAdminApiKey ? { ADMIN_API_KEY: opts.webhookAdminApiKey } : {}),
        ...(opts.webhookApiKey ? { API_KEY: opts.webhookApiKey } : { API_KEY: "", ALLOW_NO_API_KEY: "1" }),
        ...(rfqV2
          ? {
              RFQ_V2_URL: rfqV2.url,
              RFQ_V2_MAKER_ID: rfqV2.makerId,
              RFQ_V2_AUTH_TOKEN: rfqV2.standIn.tokenOf(rfqV2.makerId),
              ...(opts.rfqV2Tls ? { GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: opts.rfqV2Tls.ca } : {}),
            }
          : {}),
        ...opts.webhookEnv,
      };
      const w = {
        child: spawnWebhook(name, env),
        root: `http://127.0.0.1:${webhookPort}`,
        url: `http://127.0.0.1:${webhookPort}${config.basePath}`,
        adminUrl: `http://127.0.0.1:${webhookAdminPort}`,
        env,
      };
      children.push(w.child);
      // The instance running at close time (it may have been restarted).
      closers.push(() => w.child.stop(webhookStopGraceMs(env)));
      webhooks.push(w);
    }
    for (const w of webhooks) {
      await readyOrWhy(waitForHttp(`${w.root}/ready`, w.child), w.child);
      say(
        `${w.child.name.padEnd(9)} ${w.url}  (Redis ${clusterNodes ? "cluster" : redis.owned ? "throwaway" : "REDIS_URL"}, log ${w.child.logPath})`,
      );
    }
    const [first] = webhooks as [(typeof webhooks)[number]];
    const webhookRoot = first.root;
    const webhookUrl = first.url;
    const webhookAdminUrl = first.adminUrl;

    const operator = await startOperator({
      ...opts.operator,
      chain: operatorChainOverRpc(chainUrl),
      webhooks: [
        { name: "maker", baseUrl: webhookUrl, ...(opts.webhookApiKey ? { apiKey: opts.webhookApiKey } : {}) },
      ],
      port: opts.ports?.operator ?? 0,
      ...(smartAccount ? { smartAccounts: [smartAccount.account] } : {}),
    });
    closers.push(() => operator.close());
    const sync = operator.firstSync.get("maker");
    if (sync?.kind === "failed")
      throw new Error(`the operator could not read the webhook's token lists: ${sync.error}`);
    say(
      `operator  ${operator.url}  (webhook "maker" registered, ${operator.registry.get("maker")?.tokens.size ?? 0} tokens)`,
    );

    const stack: Stack = {
      dir,
      config,
      chainUrl,
      bundleUrl: chainUrl,
      webhookUrl,
      webhookUrls: webhooks.map((w) => w.url),
      webhookRoot,
      webhookAdminUrl,
      webhookEnv: first.env,
      operatorUrl: operator.url,
      operator,
      maker: maker.publicKey.toBase58(),
      takers,
      ...(issued ? { issued } : {}),
      ...(rfqV2 ? { rfqV2 } : {}),
      ...(smartAccount
        ? {
            smartAccount: {
              name: smartAccount.name,
              vault: smartAccount.vault,
              settings: smartAccount.settings,
              members: smartAccount.members,
            },
          }
        : {}),
      redis: redis.url,
      ...(signerUrl ? { signerUrl } : {}),
      children,
      pids: {
        chain: chain.proc.pid,
        webhook: first.child.proc.pid,
        ...Object.fromEntries(webhooks.slice(1).map((w) => [w.child.name, w.child.proc.pid])),
        ...(signer ? { signer: signer.proc.pid } : {}),
        ...(redis.pid ? { redis: redis.pid } : {}),
      },
      close,
      async killWebhook() {
        const proc = first.child.proc;
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const exited = new Promise<void>((r) => proc.once("exit", () => r()));
        proc.kill("SIGKILL");
        await exited;
      },
      async startWebhook() {
        first.child = spawnWebhook("webhook", first.env);
        children.push(first.child);
        stack.pids.webhook = first.child.proc.pid;
        await readyOrWhy(waitForHttp(`${webhookRoot}/ready`, first.child), first.child);
      },
      async stopWebhook() {
        const { proc } = first.child;
        await first.child.stop(webhookStopGraceMs(first.env));
        return { code: proc.exitCode, signal: proc.signalCode };
      },
      restartSigner: (signal) => restartSigner(signal),
    };
    writeFileSync(
      join(dir, "stack.json"),
      JSON.stringify(
        {
          chainUrl,
          bundleUrl: chainUrl,
          webhookUrl,
          webhookAdminUrl,
          operatorUrl: operator.url,
          maker: stack.maker,
          ...(issued
            ? {
                permissionedTokens: [
                  { symbol: issued.symbol, mint: issued.mint, issuer: issued.issuer, config: configPath },
                ],
              }
            : {}),
          ...(signer && signerUrl
            ? { signer: { url: signerUrl, log: signer.logPath, limits: signerLimits } }
            : {}),
          ...(rfqV2 ? { rfqV2: { url: rfqV2.url, makerId: rfqV2.makerId } } : {}),
          takers: takers.map((t) => ({
            name: t.name,
            pubkey: t.keypair.publicKey.toBase58(),
            keypair: t.keypairPath,
          })),
          // The smart-account (Squads) taker: its vault is the taker (the order's `taker`), its members
          // sign the operator's wrapped fill, the first pays the fees.
          ...(smartAccount
            ? {
                smartAccounts: [
                  {
                    name: smartAccount.name,
                    vault: smartAccount.vault.toBase58(),
                    settings: smartAccount.settings.toBase58(),
                    members: smartAccount.members.map((m, i) => ({
                      pubkey: m.publicKey.toBase58(),
                      keypair: smartAccount.memberPaths[i],
                    })),
                  },
                ],
              }
            : {}),
        },
        null,
        2,
      ),
    );
    return stack;
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * `ready`, or its error with the child's last log lines added: a child that refuses to start says why
 * in its log (a webhook's refusal names the setting and the fix), and the sandbox prints that line
 * rather than only the log's path.
 */
async function readyOrWhy(ready: Promise<void>, child: Child): Promise<void> {
  try {
    await ready;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    let tail: string[] = [];
    try {
      tail = readFileSync(child.logPath, "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "")
        .slice(-3)
        .map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l));
    } catch {
      // no log yet
    }
    throw new Error(
      tail.length ? `${message}; its last lines:\n${tail.map((l) => `    ${l}`).join("\n")}` : message,
    );
  }
}

/** Resolves once the Unix socket accepts a connection; rejects if the child exits or 60 s pass. */
async function waitForSocket(path: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(
        `${child.name} exited (code ${child.proc.exitCode}) before it was ready; see ${child.logPath}`,
      );
    }
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(path, () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until)
      throw new Error(`${path} not listening within ${timeoutMs} ms; see ${child.logPath}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
