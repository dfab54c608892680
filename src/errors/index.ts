/**
 * One error type with a code, one handler. Codes are named MALFORMED_, INVALID_,
 * _NOT_FOUND, _EXCEEDED and are never renumbered or renamed: logs and dashboards key on them.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

export const ErrorCode = {
  MALFORMED_JSON: "MALFORMED_JSON",
  INVALID_REQUEST: "INVALID_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  ROUTE_NOT_FOUND: "ROUTE_NOT_FOUND",
  /** No quote for this request: pair, size, inventory, stale price, pause, deadline. Never penalised. */
  QUOTE_NOT_AVAILABLE: "QUOTE_NOT_AVAILABLE",
  BODY_SIZE_EXCEEDED: "BODY_SIZE_EXCEEDED",
  INTERNAL: "INTERNAL",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

function statusOf(code: ErrorCode): ContentfulStatusCode {
  switch (code) {
    case ErrorCode.MALFORMED_JSON:
    case ErrorCode.INVALID_REQUEST:
      return 400;
    case ErrorCode.UNAUTHORIZED:
      return 401;
    case ErrorCode.ROUTE_NOT_FOUND:
    case ErrorCode.QUOTE_NOT_AVAILABLE:
      return 404;
    case ErrorCode.BODY_SIZE_EXCEEDED:
      return 413;
    case ErrorCode.INTERNAL:
      return 500;
  }
}

export class AppError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = "AppError";
    this.code = code;
  }
  get status(): ContentfulStatusCode {
    return statusOf(this.code);
  }
}

/** `path: message` for each zod issue, joined; the field is always named. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.join(".");
      // zod reports a missing required key as "expected string, received undefined": say it plainly.
      const missing = i.code === "invalid_type" && /received undefined/.test(i.message);
      return `${path || "body"}: ${missing ? "is required" : i.message}`;
    })
    .join("; ");
}

/**
 * The single error handler: every error leaves as `{"message": ...}` with its code's status; one that
 * is neither an AppError nor an HTTPException is logged and answered 500.
 */
export function errorHandler(err: Error, c: Context): Response {
  if (err instanceof AppError) return c.json({ message: err.message }, err.status);
  if (err instanceof HTTPException)
    return c.json({ message: err.message || "request failed" }, err.status as ContentfulStatusCode);
  c.get("log")?.error({ err }, "unhandled error");
  return c.json({ message: "internal error" }, 500);
}
