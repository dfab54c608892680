/**
 * The node:http request listener for an app (@hono/node-server's `getRequestListener`), and the
 * listener settings main.ts and the test harness share.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { Hono } from "hono";

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

// biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its env
type AnyHono = Hono<any, any, any>;

/**
 * How long the operator's listener keeps an idle connection (`server.keepAliveTimeout`): the operator
 * keeps connections alive across quotes, and Node's default 5 s cut them short. The load test's bare
 * baselines use it too, so that they are measured on the same connections.
 */
export const OPERATOR_KEEP_ALIVE_MS = 65_000;

/**
 * net.core.somaxconn: Linux's cap on a listen backlog, per network namespace (a container has its
 * own); undefined where there is no such file (not Linux).
 */
export function somaxconn(): number | undefined {
  try {
    const n = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim());
    return Number.isInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Linux silently cuts a listen backlog to `cap` (somaxconn()). The warning to log when LISTEN_BACKLOG
 * is cut that way, naming the setting that would fix it; undefined when it is not, or the cap is
 * unknown.
 */
export function backlogWarning(backlog: number, cap: number | undefined): string | undefined {
  if (cap === undefined || cap >= backlog) return undefined;
  return `LISTEN_BACKLOG ${backlog} is cut to ${cap} by net.core.somaxconn: past capacity, connections beyond it are dropped and wait for TCP's retransmit (raise it with sysctl, or docker's --sysctl net.core.somaxconn=${backlog})`;
}

/** A listener in front of Hono's: answers what it can itself, hands everything else to `next`. */
export type Gate = (next: NodeListener) => NodeListener;

const gates = new WeakMap<AnyHono, Gate>();

/**
 * Puts `gate` in front of `app` wherever it is served on node:http (requestListener): for an answer
 * that must cost less than a pass through Hono (src/routes/quote.ts: the shed 404 past capacity).
 */
export function gateBeforeHono(app: AnyHono, gate: Gate): void {
  gates.set(app, gate);
}

/** Every route of `app`, served on node:http through Hono (behind the app's gate, if it has one). */
export function requestListener(app: AnyHono): NodeListener {
  const hono = getRequestListener(app.fetch) as NodeListener;
  return gates.get(app)?.(hono) ?? hono;
}
