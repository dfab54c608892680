/** JSON body parsing that answers like every other error: 400 naming the field, never a 500. */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { z } from "zod";
import { AppError, ErrorCode, formatZodError } from "../errors/index.ts";
import type { AppEnv } from "./env.ts";

/** The 413 for a body over `maxBytes`. */
const bodyTooLarge = (maxBytes: number) =>
  new AppError(ErrorCode.BODY_SIZE_EXCEEDED, `body: larger than ${maxBytes} bytes`);

/**
 * The operator routes' body limit (`limits.maxBodyBytes`, a 413 over it). A body that states its
 * length (Content-Length without Transfer-Encoding; Node's parser holds the body to it) is judged by
 * that header; any other goes through hono's bodyLimit, which counts the bytes as they stream in.
 */
export function bodyLimitOf(maxBytes: number): MiddlewareHandler<AppEnv> {
  const streamed = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw bodyTooLarge(maxBytes);
    },
  });
  return async (c, next) => {
    const length = c.req.header("content-length");
    // hono's bodyLimit reads c.req.raw.body first: node-server then builds a web Request and body stream (its cost: docs/capacity.md).
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return streamed(c, next);
    if (Number.parseInt(length, 10) > maxBytes) throw bodyTooLarge(maxBytes);
    await next();
  };
}

/** The request's JSON body, validated by `schema`; an AppError naming the field otherwise. */
export async function parseJsonBody<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
): Promise<z.output<S>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new AppError(ErrorCode.MALFORMED_JSON, "body: must be a JSON object");
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new AppError(ErrorCode.INVALID_REQUEST, "body: must be a JSON object");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new AppError(ErrorCode.INVALID_REQUEST, formatZodError(parsed.error));
  return parsed.data;
}
