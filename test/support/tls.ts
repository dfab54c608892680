/**
 * Throwaway certificates for mutual-TLS tests, made with the `openssl` command at test time in a
 * temporary folder: a CA, a server certificate for 127.0.0.1/localhost, and a client certificate, all
 * signed by that CA (P-256 keys, valid one day). A second `makeTestPki` with another prefix makes an
 * unrelated CA and client, to show the signer refuses a certificate it did not issue.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TestPki {
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

const openssl = (args: string[], cwd: string) => execFileSync("openssl", args, { cwd, stdio: "pipe" });

function newCa(dir: string, name: string): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.crt`);
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], dir);
  openssl(["req", "-x509", "-new", "-key", key, "-out", cert, "-days", "1", "-subj", `/CN=${name}`], dir);
  return { cert, key };
}

function issue(
  dir: string,
  ca: { cert: string; key: string },
  name: string,
  ext: string,
): { cert: string; key: string } {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, `${ext}\n`);
  openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key], dir);
  openssl(["req", "-new", "-key", key, "-out", csr, "-subj", `/CN=${name}`], dir);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      ca.cert,
      "-CAkey",
      ca.key,
      "-CAcreateserial",
      "-out",
      cert,
      "-days",
      "1",
      "-extfile",
      extFile,
    ],
    dir,
  );
  return { cert, key };
}

/** A CA with a server and a client certificate, in `dir`. */
export function makeTestPki(dir: string, prefix = "signer"): TestPki {
  const ca = newCa(dir, `${prefix}-ca`);
  const server = issue(
    dir,
    ca,
    `${prefix}-server`,
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth",
  );
  const client = issue(dir, ca, `${prefix}-client`, "extendedKeyUsage=clientAuth");
  return {
    caCert: ca.cert,
    serverCert: server.cert,
    serverKey: server.key,
    clientCert: client.cert,
    clientKey: client.key,
  };
}
