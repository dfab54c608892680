/**
 * `npm run registration`: everything the operator asks for when registering the webhook, from the
 * same sources the service uses: the base URL, the maker address, whether an API key is required
 * (never the key itself), both token lists as the service would serve them now, the hash of
 * their sorted union (the operator's change detection), and the pairs in human units.
 */
import type { Config } from "../../config/load.ts";
import { AdvertisedTokenLists } from "../../inventory/advertised.ts";
import { MemoryInventory } from "../../inventory/memory.ts";
import type { PriceSource } from "../../pricing/interface.ts";
import type { UsdValuer } from "../../pricing/usd.ts";
import type { Chain } from "../chain/interface.ts";
import { table } from "../lib/table.ts";
import type { Signer } from "../signing/port.ts";
import { formatPairs, type PairLine, pairLines } from "./pairs.ts";

export interface TokenLine {
  symbol: string;
  mint: string;
  list: "tokens" | "permissioned-tokens" | "not advertised";
  why: string;
}

export interface Registration {
  baseUrl: string;
  /** Set when the base URL is a guess (PUBLIC_BASE_URL unset) or looks inconsistent. */
  baseUrlNote?: string;
  maker: string;
  apiKey: "set" | "not set";
  tokens: string[];
  permissionedTokens: string[];
  unionHash: string;
  lines: TokenLine[];
  /** The maker's holdings could not be read: the lists are empty until they can. */
  holdingsUnread: boolean;
  /** The enabled pairs in human units (sizes, spreads, caps, price and its age). */
  pairs: PairLine[];
}

export async function registration(deps: {
  config: Config;
  chain: Chain;
  signer: Signer;
  /** The service's price sources (started) and USD values over them (src/wiring/parts.ts). */
  sources: ReadonlyMap<string, PriceSource>;
  usd: UsdValuer;
}): Promise<Registration> {
  const { config } = deps;
  const base = config.file.basePath;
  let baseUrl: string;
  let baseUrlNote: string | undefined;
  if (config.env.PUBLIC_BASE_URL) {
    baseUrl = config.env.PUBLIC_BASE_URL.replace(/\/+$/, "");
    if (base && !new URL(baseUrl).pathname.endsWith(base)) {
      baseUrlNote = `PUBLIC_BASE_URL does not end with the configured basePath ${base}: the operator's calls would miss the routes`;
    }
  } else {
    const host = config.env.HOST === "0.0.0.0" || config.env.HOST === "::" ? "localhost" : config.env.HOST;
    baseUrl = `http://${host}:${config.env.PORT}${base}`;
    baseUrlNote = "PUBLIC_BASE_URL is not set: this is the local address; register the public HTTPS one";
  }

  // One read of the maker's holdings, through the same code the running service uses.
  const inventory = new MemoryInventory({
    config,
    chain: deps.chain,
    maker: deps.signer.publicKey,
    usd: deps.usd,
  });
  await inventory.refresh();
  const lists = new AdvertisedTokenLists(config, inventory);
  lists.recompute();
  const open = new Set(lists.tokens());
  const perm = new Set(lists.permissionedTokens());
  return {
    baseUrl,
    ...(baseUrlNote ? { baseUrlNote } : {}),
    maker: deps.signer.publicKey.toBase58(),
    apiKey: config.env.API_KEY ? "set" : "not set",
    tokens: lists.tokens(),
    permissionedTokens: lists.permissionedTokens(),
    unionHash: lists.unionHash(),
    lines: lists.reasons().map((r) => ({
      symbol: r.symbol,
      mint: r.mint,
      list: open.has(r.mint) ? "tokens" : perm.has(r.mint) ? "permissioned-tokens" : "not advertised",
      why: r.why,
    })),
    holdingsUnread: inventory.snapshot().chainReadAtMs === undefined,
    pairs: pairLines(config, deps.sources, deps.usd),
  };
}

export function formatRegistration(r: Registration): string {
  const out = [
    `base URL:            ${r.baseUrl}`,
    ...(r.baseUrlNote ? [`                     (${r.baseUrlNote})`] : []),
    `maker address:       ${r.maker}`,
    `API key:             ${r.apiKey === "set" ? "set (give the operator the API_KEY value; it is sent as X-API-KEY)" : "not set (no authentication)"}`,
    `/tokens:             ${r.tokens.length ? r.tokens.join(", ") : "(empty)"}`,
    `/permissioned-tokens: ${r.permissionedTokens.length ? r.permissionedTokens.join(", ") : "(empty)"}`,
    `token set hash:      ${r.unionHash}  (sha256 of the sorted union, comma-separated)`,
    "",
    table(
      ["TOKEN", "MINT", "LIST", "WHY"],
      r.lines.map((l) => [l.symbol, l.mint, l.list, l.list === "not advertised" ? l.why : ""]),
    ),
  ];
  out.push("", formatPairs(r.pairs));
  if (r.holdingsUnread)
    out.push("", "the maker's holdings could not be read from the chain: both lists are empty");
  return `${out.join("\n")}\n`;
}
