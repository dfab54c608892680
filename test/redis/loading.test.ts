/**
 * A Redis that restarts with persistence answers LOADING while it reads its AOF or RDB, and its INFO
 * gives an estimate of the load (`loading_eta_seconds`) that ioredis waits out in full before asking
 * again unless `maxLoadingRetryTime` caps it: quoting came back 9 s after a Redis that loaded in 1.2 s.
 *
 * The Redis here is a stand-in for a loading redis-server, speaking RESP on loopback: INFO says
 * `loading:1` with a 10 s estimate until the test ends the load, then `loading:0`; every other command
 * is answered `-LOADING` while loading (as Redis does) and PING `+PONG` after. (A real server would need
 * hundreds of MB of data to load for long enough, on a shared machine.)
 */
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createRedisClient, type RedisClient } from "../../src/redis/client.ts";

/** The commands of a RESP stream, as arrays of strings (bulk strings in arrays only: what clients send). */
function respCommands(onCommand: (args: string[]) => void): (chunk: Buffer) => void {
  let buf = "";
  return (chunk) => {
    buf += chunk.toString("latin1");
    for (;;) {
      if (!buf.startsWith("*")) return;
      let pos = buf.indexOf("\r\n");
      if (pos < 0) return;
      const n = Number(buf.slice(1, pos));
      let at = pos + 2;
      const args: string[] = [];
      for (let i = 0; i < n; i++) {
        pos = buf.indexOf("\r\n", at);
        if (pos < 0) return;
        const len = Number(buf.slice(at + 1, pos));
        if (buf.length < pos + 2 + len + 2) return;
        args.push(buf.slice(pos + 2, pos + 2 + len));
        at = pos + 2 + len + 2;
      }
      buf = buf.slice(at);
      onCommand(args);
    }
  };
}

const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

let server: Server | undefined;
let client: RedisClient | undefined;
afterEach(async () => {
  client?.disconnect();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
  client = undefined;
});

describe("a Redis loading its data", () => {
  it("is ready to the client within a fraction of a second of the load ending, not after the server's 10 s estimate", {
    timeout: 8_000,
  }, async () => {
    let loading = true;
    let infos = 0;
    server = createServer((socket) => {
      socket.on(
        "data",
        respCommands((args) => {
          const cmd = (args[0] ?? "").toUpperCase();
          if (cmd === "INFO") {
            infos++;
            socket.write(
              bulk(
                loading
                  ? "# Persistence\r\nloading:1\r\nloading_eta_seconds:10\r\n"
                  : "# Persistence\r\nloading:0\r\n",
              ),
            );
          } else if (loading) socket.write("-LOADING Redis is loading the dataset in memory\r\n");
          else if (cmd === "PING") socket.write("+PONG\r\n");
          else socket.write(`-ERR unknown command '${cmd}'\r\n`);
        }),
      );
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
    const { port } = server.address() as { port: number };

    client = createRedisClient(`redis://127.0.0.1:${port}`, { client: "test" });
    client.on("error", () => {});
    const ready = new Promise<number>((resolve) => client?.once("ready", () => resolve(Date.now())));
    // The client has asked at least once and been told the load takes 10 s.
    while (infos === 0) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 300));
    expect(client.status).not.toBe("ready");
    loading = false;
    const loadedAt = Date.now();
    const readyAt = await ready;
    // Asked again every 100 ms (maxLoadingRetryTime): ready a retry after the load, inside the 1 s promise.
    expect(readyAt - loadedAt).toBeLessThan(1_000);
    expect(infos).toBeGreaterThan(2);
    expect(await client.ping()).toBe("PONG");
  });
});
