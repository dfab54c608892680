/**
 * X-API-KEY check for the operator's calls. Constant-time comparison of SHA-256 digests, so neither the
 * key's content nor its length leaks through timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { AppError, ErrorCode } from "../errors/index.ts";
import { type AppEnv, header as headerOf } from "./env.ts";

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

export function apiKeyAuth(apiKey: string | undefined, header = "x-api-key"): MiddlewareHandler<AppEnv> {
  if (!apiKey) return async (_c, next) => next();
  const expected = digest(apiKey);
  return async (c, next) => {
    const given = headerOf(c, header);
    if (given === undefined)
      throw new AppError(ErrorCode.UNAUTHORIZED, `missing ${header.toUpperCase()} header`);
    if (!timingSafeEqual(digest(given), expected)) {
      throw new AppError(ErrorCode.UNAUTHORIZED, `invalid ${header.toUpperCase()}`);
    }
    await next();
  };
}
