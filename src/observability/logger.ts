/** Structured JSON logs (pino). Every quote and swap line carries requestId and quoteId. */
import { pino } from "pino";

export type Logger = pino.Logger;

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "rfq-maker-webhook" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Never log secrets even if a future line passes a whole header bag.
      redact: ["req.headers.x-api-key", "headers.x-api-key", "apiKey"],
    },
    destination,
  );
}
