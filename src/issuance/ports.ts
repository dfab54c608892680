/** What the swap path needs to fill a permissioned token the maker issues (composed in src/compose.ts). */
import type { IssuanceUsage } from "../../inventory/issuance/interface.ts";
import type { BundlePort } from "../chain/bundle.ts";
import type { CompanionMaker } from "./companion.ts";
import type { IssuancePolicies } from "./policy.ts";

export interface IssuancePorts {
  policies: IssuancePolicies;
  usage: IssuanceUsage;
  /** Makes the companion transactions: the issuer key here, or the signer service (issuer.ts). */
  companions: CompanionMaker;
  /** The bundle engine; undefined: every issued fill is refused with `unavailable` as the reason. */
  bundles: BundlePort | undefined;
  unavailable?: string;
}
