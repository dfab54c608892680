/**
 * The issuer key: the mint authority of the permissioned tokens the maker issues (config `issuance`).
 * It signs the maker's companion transactions (the mint before a fill, the burn after one) and pays
 * their fee and tip, so the maker key stays the fill's fee payer only. Where it comes from:
 *  - ISSUER_KEYPAIR: a keypair file (production; group/other access refused unless ALLOW_READABLE_KEYPAIR);
 *  - the paper setup: generated once into DATA_DIR/issuer-keypair.json, like the maker key;
 *  - production without ISSUER_KEYPAIR: the maker key itself, when it is held in this process and
 *    every policy names it (or no key) as mint authority;
 *  - remote-signer mode (SIGNER_URL): the signer service's SIGNER_ISSUER_KEYPAIR. The webhook holds no
 *    issuer key (ISSUER_KEYPAIR is refused); the signer builds and signs each companion itself, after
 *    checking the issuance caps in its own record (src/signer/service/limits.ts).
 * Every policy's `mintAuthority`, when given, must be this key: a mismatch stops the start.
 */
import { join } from "node:path";
import type { PublicKey, VersionedTransaction } from "@solana/web3.js";
import type { Config } from "../../config/load.ts";
import { ConfigError } from "../../config/load.ts";
import {
  assertPrivateKeyFile,
  KeypairSigner,
  loadOrCreateKeypair,
  readKeypairFile,
} from "../signing/keypair.ts";
import type { Signer } from "../signing/port.ts";
import { type CompanionMaker, localCompanions } from "./companion.ts";

export interface Issuer {
  /** The issuer key's public half (the mint authority). */
  publicKey: PublicKey;
  companions: CompanionMaker;
  /** Where the key is, for the banner. */
  source: string;
  created: boolean;
}

/** What the signer service offers when the maker key is there (its client: src/signing/remote.ts). */
export interface RemoteIssuer {
  /** Its issuer key, or undefined when it holds none. */
  readonly issuerKey: PublicKey | undefined;
  readonly description: string;
  /** The companion the service makes and signs for a fill it co-signed for `quoteId`. */
  companion(a: {
    quoteId: string;
    fill: VersionedTransaction;
    tipAccount: PublicKey;
  }): Promise<VersionedTransaction>;
}

/** An issuer whose key is in this process. */
export const localIssuer = (signer: Signer, maker: Signer, source: string, created: boolean): Issuer => ({
  publicKey: signer.publicKey,
  companions: localCompanions(signer, maker),
  source,
  created,
});

/** The issuer, or undefined when no token is issued. Throws ConfigError naming the setting. */
export function loadIssuer(config: Config, maker: Signer, remote?: RemoteIssuer): Issuer | undefined {
  const policies = Object.entries(config.file.issuance);
  if (policies.length === 0) return undefined;
  let issuer: Issuer;
  if (remote) {
    if (config.env.ISSUER_KEYPAIR) {
      throw new ConfigError(
        "ISSUER_KEYPAIR: not with SIGNER_URL: the issuer key belongs in the signer service (SIGNER_ISSUER_KEYPAIR), so that this process holds no key",
      );
    }
    const key = remote.issuerKey;
    if (!key) {
      throw new ConfigError(
        `SIGNER_URL: \`issuance\` is configured but the signer service ${remote.description} holds no issuer key (start it with SIGNER_ISSUER_KEYPAIR)`,
      );
    }
    issuer = {
      publicKey: key,
      // The service works out the need and the maker's account from the fill it signed.
      companions: { issuer: key, make: (a) => remote.companion(a) },
      source: `the signer service ${remote.description}`,
      created: false,
    };
  } else if (config.env.ISSUER_KEYPAIR) {
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
    issuer = localIssuer(new KeypairSigner(kp), maker, path, false);
  } else if (config.mode !== "production") {
    const path = join(config.env.DATA_DIR, "issuer-keypair.json");
    const { keypair, created } = loadOrCreateKeypair(path);
    issuer = localIssuer(new KeypairSigner(keypair), maker, path, created);
  } else if (maker instanceof KeypairSigner) {
    issuer = localIssuer(maker, maker, "the maker key (MAKER_KEYPAIR)", false);
  } else {
    throw new ConfigError(
      "ISSUER_KEYPAIR: required when `issuance` is configured and the maker key is not held in this process",
    );
  }
  const held = issuer.publicKey.toBase58();
  for (const [symbol, policy] of policies) {
    if (policy.mintAuthority && policy.mintAuthority !== held) {
      throw new ConfigError(
        `issuance.${symbol}.mintAuthority: ${policy.mintAuthority} is not the issuer key held (${held}, from ${issuer.source})`,
      );
    }
    if (policy.burnOnSell && !(maker instanceof KeypairSigner)) {
      // The burn is signed by the maker as owner of its token account; the signer service makes mints only.
      throw new ConfigError(
        `issuance.${symbol}.burnOnSell: needs the maker key in this process (the signer service at SIGNER_URL makes mint companions only); set it to false`,
      );
    }
  }
  return issuer;
}
