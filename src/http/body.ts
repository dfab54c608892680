/** JSON body parsing that answers like every other error: 400 naming the field, never a 500. */
import type { Context } from "hono";
import type { z } from "zod";
import { AppError, ErrorCode, formatZodError } from "../errors/index.ts";
import type { AppEnv } from "./env.ts";

/** The 413 for a body over `maxBytes`. */
export const bodyTooLarge = (maxBytes: number) =>
  new AppError(ErrorCode.BODY_SIZE_EXCEEDED, `body: larger than ${maxBytes} bytes`);

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
