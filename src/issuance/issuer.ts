/**
 * The issuer key: the mint authority of the permissioned tokens the maker issues (config `issuance`).
 * It signs the maker's companion transactions (the mint before a fill, the burn after one) and pays
 * their fee and tip, so the maker key stays the fill's fee payer only. Where it comes from:
 *  - ISSUER_KEYPAIR: a keypair file (production; group/other access refused unless ALLOW_READABLE_KEYPAIR);
 *  - the paper setup: generated once into DATA_DIR/issuer-keypair.json, like the maker key;
 *  - production without ISSUER_KEYPAIR: the maker key itself, when it is held in this process and
 *    every policy names it (or no key) as mint authority.
 * Every policy's `mintAuthority`, when given, must be this key: a mismatch stops the start.
 */
import { join } from "node:path";
import type { Config } from "../../config/load.ts";
import { ConfigError } from "../../config/load.ts";
import {
  assertPrivateKeyFile,
  KeypairSigner,
  loadOrCreateKeypair,
  readKeypairFile,
  type Signer,
} from "../signer/index.ts";

export interface Issuer {
  signer: KeypairSigner;
  /** Where the key came from, for the banner. */
  source: string;
  created: boolean;
}

/** The issuer, or undefined when no token is issued. Throws ConfigError naming the setting. */
export function loadIssuer(config: Config, maker: Signer): Issuer | undefined {
  const policies = Object.entries(config.file.issuance);
  if (policies.length === 0) return undefined;
  let issuer: Issuer;
  if (config.env.ISSUER_KEYPAIR) {
    const path = config.env.ISSUER_KEYPAIR;
    if (config.mode === "production" && !config.env.ALLOW_READABLE_KEYPAIR) {
      try {
        assertPrivateKeyFile(path, "ISSUER_KEYPAIR");
      } catch (e) {
        throw new ConfigError((e as Error).message);
      }
    }
    let kp: ReturnType<typeof readKeypairFile>;
    try {
      kp = readKeypairFile(path, "ISSUER_KEYPAIR");
    } catch (e) {
      throw new ConfigError((e as Error).message);
    }
    issuer = { signer: new KeypairSigner(kp), source: path, created: false };
  } else if (config.mode !== "production") {
    const path = join(config.env.DATA_DIR, "issuer-keypair.json");
    const { keypair, created } = loadOrCreateKeypair(path);
    issuer = { signer: new KeypairSigner(keypair), source: path, created };
  } else if (maker instanceof KeypairSigner) {
    issuer = { signer: maker, source: "the maker key (MAKER_KEYPAIR)", created: false };
  } else {
    throw new ConfigError(
      "ISSUER_KEYPAIR: required when `issuance` is configured and the maker key is in the signer service (SIGNER_URL)",
    );
  }
  const held = issuer.signer.publicKey.toBase58();
  for (const [symbol, policy] of policies) {
    if (policy.mintAuthority && policy.mintAuthority !== held) {
      throw new ConfigError(
        `issuance.${symbol}.mintAuthority: ${policy.mintAuthority} is not the issuer key held (${held}, from ${issuer.source})`,
      );
    }
    if (policy.burnOnSell && !(maker instanceof KeypairSigner)) {
      // The burn is signed by the maker as owner of its token account; the signer service signs fills only.
      throw new ConfigError(
        `issuance.${symbol}.burnOnSell: needs the maker key in this process (the signer service at SIGNER_URL signs fills only); set it to false`,
      );
    }
  }
  return issuer;
}
