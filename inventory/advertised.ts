/**
 * What GET /tokens and GET /permissioned-tokens advertise: the configured tokens that some enabled
 * pair trades, for which the maker has its associated token account and at least `minInventory`
 * (a token the maker cannot fill gets quotes the operator silently drops, or fills that fail), and
 * whose mint is tradable (no Token-2022 transfer fee).
 *
 * Lists are recomputed whenever the inventory reports a change, and served from memory. The operator
 * notices a change only through the hash of the sorted union of both lists, so a change that merely
 * moves a mint from one list to the other is logged as a warning: it needs a forced re-sync through
 * the operator. The last published lists are kept in a store (advertised-store/: Redis, or a file in
 * the data folder) so that such a move is caught across a restart with a new configuration too.
 */
import type { Logger } from "pino";
import type { Config } from "../config/load.ts";
import type { AdvertisedStore, PublishedLists } from "./advertised-store/interface.ts";
import type { Inventory } from "./interface.ts";
import { type TokenLists, unionHash } from "./token-lists.ts";

export interface AdvertisedOptions {
  store?: AdvertisedStore;
  log?: Logger;
}

/** The TokenLists the /tokens routes serve, following the maker's real holdings. */
export class AdvertisedTokenLists implements TokenLists {
  private open: string[] = [];
  private permissioned: string[] = [];
  private hash = unionHash({ tokens: () => [], permissionedTokens: () => [] });
  private previous: PublishedLists | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Tokens some enabled pair trades; the others are never advertised. */
  private readonly traded: Set<string>;

  constructor(
    private readonly config: Config,
    private readonly inventory: Pick<Inventory, "snapshot" | "onChange">,
    private readonly opts: AdvertisedOptions = {},
  ) {
    this.traded = new Set(
      config.file.pairs
        .filter((p) => p.enabled)
        .flatMap((p) => [config.tokensBySymbol.get(p.base)!.mint, config.tokensBySymbol.get(p.quote)!.mint]),
    );
  }

  tokens(): string[] {
    return this.open;
  }

  permissionedTokens(): string[] {
    return this.permissioned;
  }

  /** sha256 (hex) of the sorted union, as the operator computes it for change detection. */
  unionHash(): string {
    return this.hash;
  }

  /** Why each configured token is or is not advertised (for `npm run registration` and doctor). */
  reasons(): { symbol: string; mint: string; advertised: boolean; why: string }[] {
    const snap = this.inventory.snapshot();
    return this.config.file.tokens.map((t) => {
      const why = this.exclusion(t.mint, snap);
      return { symbol: t.symbol, mint: t.mint, advertised: why === undefined, why: why ?? "advertised" };
    });
  }

  async start(): Promise<void> {
    this.previous = await this.opts.store?.load().catch(() => undefined);
    this.recompute();
    this.unsubscribe = this.inventory.onChange(() => this.recompute());
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
  }

  private exclusion(mint: string, snap: ReturnType<Inventory["snapshot"]>): string | undefined {
    const token = this.config.tokensByMint.get(mint)!;
    if (!this.traded.has(mint)) return "no enabled pair trades it";
    const h = snap.holdings.find((x) => x.mint === mint);
    if (snap.chainReadAtMs === undefined || !h) return "maker holdings not read yet";
    if (h.problem) return h.problem;
    if (!h.ataExists) return `maker has no associated token account (${h.ata})`;
    if (h.balance < BigInt(token.minInventory))
      return `balance ${h.balance} below minInventory ${token.minInventory}`;
    return undefined;
  }

  /** Recomputes both lists from the inventory; logs and remembers a change. */
  recompute(): void {
    const snap = this.inventory.snapshot();
    if (snap.chainReadAtMs === undefined) {
      // Never read the chain yet: keep serving what was last published rather than an empty set,
      // which would make the operator drop every token until the next sync.
      if (this.previous && !this.open.length && !this.permissioned.length) this.set(this.previous);
      return;
    }
    const open: string[] = [];
    const permissioned: string[] = [];
    for (const t of this.config.file.tokens) {
      if (this.exclusion(t.mint, snap) !== undefined) continue;
      (t.permissioned ? permissioned : open).push(t.mint);
    }
    const next = { tokens: open, permissioned };
    const before = this.previous;
    if (before && same(before.tokens, open) && same(before.permissioned, permissioned)) {
      if (this.open !== before.tokens) this.set(before);
      return;
    }
    this.set(next);
    const log = this.opts.log;
    if (!before) {
      log?.info(
        { tokens: open, permissionedTokens: permissioned, unionHash: this.hash },
        "advertised tokens",
      );
    } else {
      const was = new Set([...before.tokens, ...before.permissioned]);
      const now = new Set([...open, ...permissioned]);
      if (same([...was], [...now])) {
        log?.warn(
          { tokens: open, permissionedTokens: permissioned, unionHash: this.hash },
          "advertised tokens: a mint only moved between /tokens and /permissioned-tokens; the operator's " +
            "change detection hashes the sorted union and will not see it: ask the operator for a forced re-sync",
        );
      } else {
        log?.info(
          {
            added: [...now].filter((m) => !was.has(m)),
            removed: [...was].filter((m) => !now.has(m)),
            unionHash: this.hash,
          },
          "advertised tokens changed",
        );
      }
    }
    this.previous = next;
    this.opts.store
      ?.save(next)
      .catch((err) => log?.warn({ err }, "advertised tokens: cannot remember the lists"));
  }

  private set(lists: PublishedLists): void {
    this.open = lists.tokens;
    this.permissioned = lists.permissioned;
    this.hash = unionHash(this);
  }
}

function same(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}
