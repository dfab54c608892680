/**
 * The node:http request listener for an app: Hono's (@hono/node-server `getRequestListener`), with
 * the routes the app registered to be served natively (src/http/native-quote.ts) taken first.
 * Servers are built from this (main.ts, the test harness), never from `app.fetch` alone, so that the
 * operator's port serves POST /quote the fast way; `app.request()` still runs everything through Hono.
 */
import { readFileSync } from "node:fs";
import { getRequestListener } from "@hono/node-server";
import type { Hono } from "hono";
import type { NodeListener } from "./native-quote.ts";

interface NativeRoute {
  method: string;
  path: string;
  listener: NodeListener;
}

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

const nativeRoutes = new WeakMap<AnyHono, NativeRoute[]>();

/** Serves `method path` (query string allowed) with `listener` wherever the app is served on node:http. */
export function addNativeRoute(app: AnyHono, route: NativeRoute): void {
  nativeRoutes.set(app, [...(nativeRoutes.get(app) ?? []), route]);
}

export function requestListener(app: AnyHono): NodeListener {
  const hono = getRequestListener(app.fetch) as NodeListener;
  const routes = nativeRoutes.get(app);
  if (!routes?.length) return hono;
  const table = routes.map((r) => ({ ...r, withQuery: `${r.path}?` }));
  return (req, res) => {
    const url = req.url ?? "";
    for (const r of table) {
      if (req.method === r.method && (url === r.path || url.startsWith(r.withQuery))) {
        r.listener(req, res);
        return;
      }
    }
    hono(req, res);
  };
}
