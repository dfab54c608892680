/**
 * The operator routes' body limit over a real socket, both ways a body can arrive: with a
 * Content-Length (judged by the header) and chunked (counted as it streams, by hono's bodyLimit).
 */
import { request } from "node:http";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Service } from "../../src/compose.ts";
import { listen } from "../support/harness.ts";
import { quoteBody } from "../support/quotes.ts";
import { testService } from "../support/service.ts";

let svc: Service;
let server: Awaited<ReturnType<typeof listen>>;
let maxBytes: number;
beforeAll(async () => {
  svc = await testService();
  server = await listen(svc.app);
  maxBytes = svc.config.file.limits.maxBodyBytes;
});
afterAll(async () => {
  await server?.close();
  await svc?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** POSTs `body` to `path`, with a Content-Length or chunked (in 1 KiB chunks, no Content-Length). */
function post(
  path: string,
  body: string,
  framing: "content-length" | "chunked",
): Promise<{ status: number; json: { message?: string; quoteId?: string } }> {
  const url = new URL(path, server.url);
  const headers: Record<string, string | number> = {
    "content-type": "application/json",
    "x-request-timeout": "10000",
  };
  if (framing === "content-length") headers["content-length"] = Buffer.byteLength(body);
  else headers["transfer-encoding"] = "chunked";
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }),
      );
    });
    // The server may answer 413 and close before the whole body is sent.
    req.on("error", reject);
    for (let i = 0; i < body.length; i += 1024) req.write(body.slice(i, i + 1024));
    req.end();
  });
}

const oversized = () => JSON.stringify({ ...quoteBody(), pad: "x".repeat(maxBytes) });

describe("body limit over a socket", () => {
  it.each(["content-length", "chunked"] as const)(
    "answers 413 naming the body to a quote larger than maxBodyBytes sent %s",
    async (framing) => {
      const res = await post("/quote", oversized(), framing);
      expect(res.status).toBe(413);
      expect(res.json.message).toBe(`body: larger than ${maxBytes} bytes`);
    },
  );

  it.each(["content-length", "chunked"] as const)(
    "answers 413 to a swap larger than maxBodyBytes sent %s",
    async (framing) => {
      const body = JSON.stringify({ requestId: "r", quoteId: "q", transaction: "A".repeat(maxBytes) });
      const res = await post("/swap", body, framing);
      expect(res.status).toBe(413);
    },
  );

  it.each(["content-length", "chunked"] as const)(
    "quotes a body within maxBodyBytes sent %s",
    async (framing) => {
      const body = quoteBody();
      const res = await post("/quote", JSON.stringify(body), framing);
      expect(res.status).toBe(200);
      expect(res.json.quoteId).toBe(body.quoteId);
    },
  );

  it("reads a quote sent with a Content-Length without a web stream of its body (a chunked one gets one)", async () => {
    const toWeb = vi.spyOn(Readable, "toWeb");
    expect((await post("/quote", JSON.stringify(quoteBody()), "content-length")).status).toBe(200);
    expect(toWeb).not.toHaveBeenCalled();
    expect((await post("/quote", JSON.stringify(quoteBody()), "chunked")).status).toBe(200);
    expect(toWeb).toHaveBeenCalled();
  });
});
