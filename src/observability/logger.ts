/** Structured JSON logs (pino). Every quote and swap line carries requestId and quoteId. */
import { pino } from "pino";

export type Logger = pino.Logger;

/**
 * Errors as pino's standard serializer writes them, less what a Redis error drags along: ioredis
 * attaches the failed command (`command: {name, args}`: keys, values, whole Lua scripts for EVAL) and
 * earlier errors. Only the command's name stays.
 */
function errorSerializer(err: unknown): unknown {
  const out = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  if (!out || typeof out !== "object") return out;
  const command = out.command as { name?: unknown } | undefined;
  delete out.command;
  delete out.args;
  delete out.previousErrors;
  if (command && typeof command.name === "string") out.redisCommand = command.name;
  return out;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      serializers: { err: errorSerializer, error: errorSerializer },
      base: { service: "rfq-maker-webhook" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Never log secrets even if a future line passes a whole header bag.
      redact: ["req.headers.x-api-key", "headers.x-api-key", "apiKey"],
    },
    destination,
  );
}
