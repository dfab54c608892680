/** What the swap path needs to fill a permissioned token the maker issues (composed in src/compose.ts). */
import type { IssuanceBook } from "../../inventory/issuance/interface.ts";
import type { BundlePort } from "../chain/bundle.ts";
import type { Signer } from "../signer/index.ts";
import type { IssuancePolicies } from "./policy.ts";

export interface IssuancePorts {
  policies: IssuancePolicies;
  book: IssuanceBook;
  /** The mint authority: signs and pays for the companion transactions (issuer.ts). */
  issuer: Signer;
  /** The bundle engine; undefined: every issued fill is refused with `unavailable` as the reason. */
  bundles: BundlePort | undefined;
  unavailable?: string;
}
