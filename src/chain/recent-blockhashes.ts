/**
 * Recent blockhashes, kept in the background from the Chain port (either adapter), so that /swap
 * can judge a fill's blockhash without a chain call in the common case.
 *
 * Every `pollMs` the cache asks for the latest blockhash and the block height, and remembers each
 * blockhash with the last block height at which it is still accepted. A fill's blockhash is then:
 * - known: judged from the cache alone (no call): expired, or with fewer than `minBlocksLeft` blocks
 *   to live (it would expire before the fill could land), or fine;
 * - unknown (the operator fetched it between two polls, or it is made up): one `isBlockhashValid`
 *   call, bounded by the caller. A blockhash the chain does not know, or no longer accepts, is
 *   refused. One it still accepts is taken: the RPC does not say how old a blockhash is, and a valid
 *   one we missed between two polls may sit anywhere in the window (no bound on its life left can be
 *   derived from the neighbours we saw). Polling often (`pollMs` near the block time) keeps this
 *   case rare; the verdict says `known: false` so logs show it.
 *
 * The height between polls is extrapolated at `slotMs` per block (400 ms on mainnet), so a stalled
 * poll errs towards calling a blockhash older than it is, never younger.
 */
import { FillRejectCode, type Refused } from "../refusal/codes.ts";
import type { Chain } from "./interface.ts";

export interface RecentBlockhashesOptions {
  /** Interval between polls, ms (default 1,000). */
  pollMs?: number;
  /** Block time used to extrapolate the height between polls, ms (default 400). */
  slotMs?: number;
  now?: () => number;
}

export type BlockhashVerdict =
  /** `blocksLeft` is known only for a blockhash the cache saw issued. */
  | { ok: true; known: true; blocksLeft: bigint }
  | { ok: true; known: false }
  | Refused<typeof FillRejectCode.BLOCKHASH_NOT_FOUND>
  | (Refused<typeof FillRejectCode.BLOCKHASH_AGE_EXCEEDED> & { blocksLeft: bigint });

interface Seen {
  lastValidBlockHeight: bigint;
  /** Height when it was first seen. */
  seenAt: bigint;
}

export class RecentBlockhashes {
  private readonly pollMs: number;
  private readonly slotMs: number;
  private readonly now: () => number;
  private readonly seen = new Map<string, Seen>();
  private height: { value: bigint; atMs: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** Last poll error, for logs and readiness. */
  lastError: string | undefined;

  constructor(
    private readonly chain: Pick<Chain, "getLatestBlockhash" | "getBlockHeight" | "isBlockhashValid">,
    opts: RecentBlockhashesOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? 1_000;
    this.slotMs = opts.slotMs ?? 400;
    this.now = opts.now ?? Date.now;
  }

  /** Polls once (awaited, so the cache is warm when serving starts), then every `pollMs`. */
  async start(): Promise<void> {
    await this.poll();
    this.timer ??= setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * One poll: the latest blockhash and the height, read after this call began (a poll already in
   * flight may have read them before, so it is awaited first, then a fresh one runs).
   */
  async poll(): Promise<void> {
    while (this.polling) await this.polling;
    this.polling = (async () => {
      try {
        const [latest, height] = await Promise.all([
          this.chain.getLatestBlockhash(),
          this.chain.getBlockHeight(),
        ]);
        this.height = { value: height, atMs: this.now() };
        if (!this.seen.has(latest.blockhash)) {
          this.seen.set(latest.blockhash, {
            lastValidBlockHeight: latest.lastValidBlockHeight,
            seenAt: height,
          });
        }
        this.prune(height);
        this.lastError = undefined;
      } catch (e) {
        this.lastError = e instanceof Error ? e.message : String(e);
      } finally {
        this.polling = undefined;
      }
    })();
    await this.polling;
  }

  /** Blockhashes currently remembered. */
  get size(): number {
    return this.seen.size;
  }

  /** Whether `blockhash` is in the cache (no chain call needed to judge it). */
  knows(blockhash: string): boolean {
    return this.seen.has(blockhash);
  }

  /** The current block height, extrapolated from the last poll; undefined before the first one. */
  currentHeight(): bigint | undefined {
    if (!this.height) return undefined;
    const elapsed = Math.max(0, this.now() - this.height.atMs);
    return this.height.value + BigInt(Math.floor(elapsed / this.slotMs));
  }

  /**
   * Judges `blockhash` for a fill that must still be accepted `minBlocksLeft` blocks from now. Throws
   * only when the chain cannot be asked about an unknown blockhash (the caller bounds and reports it).
   */
  async check(blockhash: string, minBlocksLeft: bigint): Promise<BlockhashVerdict> {
    if (!this.height) await this.poll();
    const height = this.currentHeight();
    const known = this.seen.get(blockhash);
    if (known && height !== undefined) return this.judge(known.lastValidBlockHeight - height, minBlocksLeft);

    if (!(await this.chain.isBlockhashValid(blockhash))) {
      return {
        ok: false,
        code: FillRejectCode.BLOCKHASH_NOT_FOUND,
        context: `the recent blockhash ${blockhash} is not one the chain accepts (unknown or expired)`,
      };
    }
    return { ok: true, known: false };
  }

  private judge(blocksLeft: bigint, minBlocksLeft: bigint): BlockhashVerdict {
    if (blocksLeft < 0n) {
      return {
        ok: false,
        code: FillRejectCode.BLOCKHASH_NOT_FOUND,
        context: `the recent blockhash expired ${-blocksLeft} blocks ago`,
      };
    }
    if (blocksLeft < minBlocksLeft) {
      return {
        ok: false,
        code: FillRejectCode.BLOCKHASH_AGE_EXCEEDED,
        blocksLeft,
        context: `the recent blockhash is accepted for ${blocksLeft} more blocks, fewer than the ${minBlocksLeft} a fill needs to land`,
      };
    }
    return { ok: true, known: true, blocksLeft };
  }

  private prune(height: bigint): void {
    // Keep expired entries one lifetime more: they tell an expired blockhash from a made-up one
    // without a call, and show that the cache spans a lifetime.
    for (const [hash, s] of this.seen) {
      if (s.lastValidBlockHeight + (s.lastValidBlockHeight - s.seenAt) < height) this.seen.delete(hash);
    }
  }
}
