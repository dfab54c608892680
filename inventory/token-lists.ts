/**
 * What the maker advertises on GET /tokens and GET /permissioned-tokens. The operator's supported set
 * is the union of both lists; a mint is permissioned only if it is in the second. The implementation
 * that follows the maker's real holdings is inventory/advertised.ts.
 */

import { createHash } from "node:crypto";

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
