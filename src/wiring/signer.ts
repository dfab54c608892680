/**
 * The maker's key and the issuer's: a given signer (tests), the signer service (`SIGNER_URL`: the key
 * in its own process, src/signing/remote.ts), or the keypair file (`MAKER_KEYPAIR`, or the paper
 * setup's generated one); the issuer key beside it when the configuration issues permissioned tokens.
 */
import { userInfo } from "node:os";
import { describeCause, StartupError } from "../errors/startup.ts";
import { type Issuer, loadIssuer, localIssuer } from "../issuance/issuer.ts";
import { makeSigner } from "../signing/keypair.ts";
import type { Signer } from "../signing/port.ts";
import { RemoteSigner } from "../signing/remote.ts";
import { owned, type Wiring } from "./options.ts";

export interface WiredKeys {
  signer: Signer;
  /** Whether the maker key was generated on this start (paper setup). */
  keyCreated: boolean;
  issuer: Issuer | undefined;
}

export async function wireKeys(w: Wiring): Promise<WiredKeys> {
  const { config, given } = w;
  const { signer, created } = given.signer
    ? { signer: given.signer, created: false }
    : config.env.SIGNER_URL
      ? { signer: await connectRemoteSigner(w), created: false }
      : keypairSigner(w);
  const issuer: Issuer | undefined =
    given.issuer && Object.keys(config.file.issuance).length > 0
      ? localIssuer(given.issuer, signer, "given", false)
      : loadIssuer(config, signer, signer instanceof RemoteSigner ? signer : undefined);
  return { signer, keyCreated: created, issuer };
}

/** SIGNER_URL: the signer service holds the key; this process asks it (src/signing/remote.ts). */
async function connectRemoteSigner(w: Wiring): Promise<Signer> {
  const env = w.config.env;
  const url = env.SIGNER_URL as string;
  try {
    const remote = await RemoteSigner.connect({
      url,
      ...(env.SIGNER_CA ? { caFile: env.SIGNER_CA } : {}),
      ...(env.SIGNER_CLIENT_CERT ? { clientCertFile: env.SIGNER_CLIENT_CERT } : {}),
      ...(env.SIGNER_CLIENT_KEY ? { clientKeyFile: env.SIGNER_CLIENT_KEY } : {}),
      timeoutMs: env.SIGNER_TIMEOUT_MS,
    });
    return owned(w, remote);
  } catch (e) {
    throw new StartupError("SIGNER_URL", url, `not reachable: ${describeCause(e)}`);
  }
}

function keypairSigner(w: Wiring): { signer: Signer; created: boolean } {
  try {
    return makeSigner(w.config);
  } catch (e) {
    const cause = describeCause(e);
    // EACCES alone does not say for whom: name the user this process runs as (the image's `node`).
    const who = /\bEACCES\b/.test(cause) ? ` (not readable by ${processUser()})` : "";
    throw new StartupError("MAKER_KEYPAIR", w.config.env.MAKER_KEYPAIR ?? "", `${cause}${who}`);
  }
}

/** `user node (uid 1000, gid 1000)`: whom a file must be readable by. */
function processUser(): string {
  const uid = process.getuid?.();
  let name = "?";
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry for this uid (a container run with --user N)
  }
  return `user ${name} (uid ${uid ?? "?"}, gid ${process.getgid?.() ?? "?"}): chown it to that uid, mode 0600`;
}
