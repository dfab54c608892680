/**
 * The signer service's listeners: a Unix socket (file mode 0600: only the signer's own user, and root,
 * can connect) and/or TCP with mutual TLS (node:tls; TLS 1.3; a client must present a certificate
 * signed by SIGNER_TLS_CLIENT_CA). Both speak the protocol of ../protocol.ts.
 */
import { chmodSync, existsSync, lstatSync, readFileSync, unlinkSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { Logger } from "../../observability/logger.ts";
import { SignerRefusalCode, SwapRefusalCode } from "../../refusal/codes.ts";
import {
  lineReader,
  type SignerRequest,
  type SignerResponse,
  signerRequestSchema,
} from "../../signing/protocol.ts";

export type RequestHandler = (req: SignerRequest) => Promise<SignerResponse>;

export interface TlsListen {
  host: string;
  port: number;
  /** PEM files: the server's certificate and key, and the CA that signs the webhooks' client certs. */
  certFile: string;
  keyFile: string;
  clientCaFile: string;
}

export interface ListenOptions {
  socketPath?: string;
  tls?: TlsListen;
  handle: RequestHandler;
  log: Logger;
}

export interface SignerListeners {
  /** The bound TCP port (when `tls` was given; useful with port 0). */
  tlsPort?: number;
  socketPath?: string;
  close(): Promise<void>;
}

/** Serves one connection: a request per line, each answered when its decision is ready. */
function serveConnection(socket: Socket | TLSSocket, handle: RequestHandler, log: Logger): void {
  socket.setNoDelay(true);
  const send = (r: SignerResponse) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(r)}\n`);
  };
  const feed = lineReader((line) => {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      json = undefined;
    }
    const parsed = signerRequestSchema.safeParse(json);
    if (!parsed.success) {
      const id = typeof (json as { id?: unknown })?.id === "number" ? (json as { id: number }).id : -1;
      log.warn({ code: SignerRefusalCode.SIGNER_BAD_REQUEST }, "signature refused: not a protocol request");
      send({ id, ok: false, code: SignerRefusalCode.SIGNER_BAD_REQUEST, context: "not a protocol request" });
      return;
    }
    handle(parsed.data).then(send, (err) => {
      log.error({ err }, "signer request failed unexpectedly");
      send({
        id: parsed.data.id,
        ok: false,
        code: SwapRefusalCode.INTERNAL_ERROR,
        context: "internal error",
      });
    });
  });
  socket.on("data", (chunk) => {
    if (!feed(chunk)) {
      log.warn({ code: SignerRefusalCode.SIGNER_BAD_REQUEST }, "signer connection dropped: line too long");
      socket.destroy();
    }
  });
  socket.on("error", () => socket.destroy());
}

function listenOn(server: Server, ...args: unknown[]): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    (server.listen as (...a: unknown[]) => void)(...args, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

const closeServer = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));

export async function listenSigner(opts: ListenOptions): Promise<SignerListeners> {
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };
  const out: SignerListeners = {
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map(closeServer));
    },
  };
  try {
    if (opts.socketPath) {
      const path = opts.socketPath;
      // A socket file left by a previous run (killed, not stopped) would make listen fail: remove it,
      // but never anything that is not a socket.
      if (existsSync(path)) {
        if (!lstatSync(path).isSocket())
          throw new Error(`SIGNER_SOCKET: ${path} exists and is not a socket; refusing to replace it`);
        unlinkSync(path);
      }
      const server = createServer((s) => {
        track(s);
        serveConnection(s, opts.handle, opts.log);
      });
      // Created owner-only from the first instant (umask), then made so explicitly.
      const umask = process.umask(0o177);
      try {
        await listenOn(server, path);
      } finally {
        process.umask(umask);
      }
      chmodSync(path, 0o600);
      servers.push(server);
      out.socketPath = path;
    }
    if (opts.tls) {
      const t = opts.tls;
      const read = (file: string, setting: string) => {
        try {
          return readFileSync(file);
        } catch (e) {
          throw new Error(
            `${setting}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? "read failed"}`,
          );
        }
      };
      const server = createTlsServer(
        {
          cert: read(t.certFile, "SIGNER_TLS_CERT"),
          key: read(t.keyFile, "SIGNER_TLS_KEY"),
          ca: read(t.clientCaFile, "SIGNER_TLS_CLIENT_CA"),
          requestCert: true,
          rejectUnauthorized: true,
          minVersion: "TLSv1.3",
        },
        (s) => {
          track(s);
          serveConnection(s, opts.handle, opts.log);
        },
      );
      server.on("tlsClientError", (err) =>
        opts.log.warn({ error: err.message }, "signer: TLS client refused (no or untrusted certificate)"),
      );
      await listenOn(server, t.port, t.host);
      servers.push(server);
      const addr = server.address();
      out.tlsPort = typeof addr === "object" && addr ? addr.port : t.port;
    }
  } catch (e) {
    await out.close();
    throw e;
  }
  return out;
}
