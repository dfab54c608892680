/** JSON body parsing that answers like every other error: 400 naming the field, never a 500. */
import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { z } from "zod";
import { AppError, ErrorCode, formatZodError } from "../errors/index.ts";
import type { AppEnv } from "./env.ts";
import { parseJsonUninterned } from "./json-uninterned.ts";

/** The 413 for a body over `maxBytes`, whichever path finds it. */
export const bodyTooLarge = (maxBytes: number) =>
  new AppError(ErrorCode.BODY_SIZE_EXCEEDED, `body: larger than ${maxBytes} bytes`);

/**
 * A declared Content-Length against the limit, from the header alone: "over" or "within", or
 * undefined when none is declared (a chunked body, counted as it streams).
 */
export const declaredSize = (
  contentLength: string | undefined,
  transferEncoding: string | undefined,
  maxBytes: number,
): "over" | "within" | undefined =>
  contentLength === undefined || transferEncoding !== undefined
    ? undefined
    : Number.parseInt(contentLength, 10) > maxBytes
      ? "over"
      : "within";

/**
 * Reads the body straight from Node's IncomingMessage (under @hono/node-server) instead of
 * `c.req.json()`, which would first build a full web Request: same bytes, a fraction of the CPU and
 * garbage. Used only while the stream is untouched; otherwise (tests via `app.request()`, or a body
 * bodyLimit already streamed) Hono's own reader answers. With `maxBytes`, fails with the 413 as soon
 * as the body passes it (the rest is drained by node:http once the answer is written).
 */
export function readIncoming(req: IncomingMessage, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (d: Buffer) => {
      bytes += d.length;
      if (bytes > maxBytes) {
        req.off("data", onData);
        reject(bodyTooLarge(maxBytes));
        return;
      }
      chunks.push(d);
    };
    req.on("data", onData);
    req.on("end", () =>
      resolve(
        chunks.length === 1 ? (chunks[0] as Buffer).toString("utf8") : Buffer.concat(chunks).toString("utf8"),
      ),
    );
    req.on("error", reject);
  });
}

/**
 * A schema's hand-written twin for a hot path: the schema's own output for what it accepts, or
 * undefined for anything it is not sure of (the schema then decides, and names the field).
 */
export type FastParse = (raw: unknown) => object | undefined;

/**
 * `uninterned`: top-level keys whose short string values must not be internalized by `JSON.parse`
 * (a hot path's unique values, such as a quote's amount: src/http/json-uninterned.ts).
 */
export async function parseJsonBody<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
  fast?: FastParse,
  uninterned?: readonly string[],
): Promise<z.output<S>> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming && !incoming.readableEnded)
    return parseJsonText(await readIncoming(incoming), schema, fast, uninterned);
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new AppError(ErrorCode.MALFORMED_JSON, "body: must be a JSON object");
  }
  return validated(raw, schema, fast);
}

/** A body's text, parsed as JSON and validated: the same errors as `parseJsonBody`. */
export function parseJsonText<S extends z.ZodType>(
  text: string,
  schema: S,
  fast?: FastParse,
  uninterned?: readonly string[],
): z.output<S> {
  let raw: unknown;
  try {
    raw = uninterned ? parseJsonUninterned(text, uninterned) : JSON.parse(text);
  } catch {
    throw new AppError(ErrorCode.MALFORMED_JSON, "body: must be a JSON object");
  }
  return validated(raw, schema, fast);
}

function validated<S extends z.ZodType>(raw: unknown, schema: S, fast?: FastParse): z.output<S> {
  const quick = fast?.(raw);
  if (quick !== undefined) return quick as z.output<S>;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new AppError(ErrorCode.INVALID_REQUEST, "body: must be a JSON object");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new AppError(ErrorCode.INVALID_REQUEST, formatZodError(parsed.error));
  return parsed.data;
}
