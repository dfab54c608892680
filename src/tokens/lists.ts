/**
 * What the maker advertises on GET /tokens and GET /permissioned-tokens. The operator's supported set
 * is the union of both lists; a mint is permissioned only if it is in the second.
 */
import { createHash } from "node:crypto";
import type { TokenConfig } from "../../config/schema.ts";

export interface TokenLists {
  /** Mints on GET /tokens (synchronous, from memory). */
  tokens(): string[];
  /** Mints on GET /permissioned-tokens. */
  permissionedTokens(): string[];
}

/** The operator's change detection: a hash of the sorted union of both lists. */
export function unionHash(lists: TokenLists): string {
  const union = [...new Set([...lists.tokens(), ...lists.permissionedTokens()])].sort();
  return createHash("sha256").update(union.join(",")).digest("hex");
}

/** Every configured token, split by its `permissioned` flag: the lists before inventory is known. */
export class ConfigTokenLists implements TokenLists {
  private readonly open: string[];
  private readonly permissioned: string[];

  constructor(tokens: readonly TokenConfig[]) {
    this.open = tokens.filter((t) => !t.permissioned).map((t) => t.mint);
    this.permissioned = tokens.filter((t) => t.permissioned).map((t) => t.mint);
  }

  tokens(): string[] {
    return this.open;
  }

  permissionedTokens(): string[] {
    return this.permissioned;
  }
}
