/**
 * HAProxy in front of a webhook, run from the file a maker deploys (deploy/haproxy/haproxy.cfg): its
 * settings come in through the environment, as they do in docker-compose's `proxy` profile, so the
 * tests and the load test's `--proxy` target run exactly the shipped configuration.
 *
 * HAProxy is Debian's `haproxy` package (2.6 here). `haproxyVersion()` says whether it is on the PATH.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { type Child, freePort, REPO_ROOT, spawnLogged, waitForHttp } from "./processes.ts";

export const HAPROXY_CONFIG = join(REPO_ROOT, "deploy/haproxy/haproxy.cfg");

/** The limits the shipped file reads (its header says why these defaults). */
export interface ProxyLimits {
  /** PROXY_WEBHOOK_MAXCONN: quotes in the webhook at once. */
  maxconn: number;
  /** PROXY_QUOTE_QUEUE: quotes waiting in HAProxy for a slot; one more is refused at once. */
  queue: number;
  /** PROXY_QUOTE_QUEUE_MS: how long a quote may wait in HAProxy for a slot before its 404. */
  queueMs: number;
}

/** docker-compose.yml's defaults; keep the two in step (test/deploy/haproxy.test.ts checks them). */
export const PROXY_DEFAULTS: ProxyLimits = { maxconn: 32, queue: 256, queueMs: 50 };

/** `haproxy -v`'s first line, or undefined when HAProxy is not on the PATH. */
export function haproxyVersion(): string | undefined {
  const r = spawnSync("haproxy", ["-v"], { encoding: "utf8" });
  if (r.error || r.status !== 0) return undefined;
  return r.stdout.split("\n")[0]?.trim();
}

/** The environment the shipped file reads. */
export function proxyEnv(
  bind: string,
  webhookAddr: string,
  statsBind: string,
  limits: ProxyLimits,
): Record<string, string> {
  return {
    PROXY_BIND: bind,
    WEBHOOK_ADDR: webhookAddr,
    PROXY_STATS_BIND: statsBind,
    PROXY_WEBHOOK_MAXCONN: String(limits.maxconn),
    PROXY_QUOTE_QUEUE: String(limits.queue),
    PROXY_QUOTE_QUEUE_MS: String(limits.queueMs),
  };
}

export interface ProxyHandle {
  /** http://127.0.0.1:<port>: the operator's side (append the webhook's paths). */
  url: string;
  /** HAProxy's Prometheus exporter. */
  metricsUrl: string;
  /** HAProxy itself (`-db`: in the foreground, so that its CPU is measured by this pid). */
  child: Child;
}

/**
 * Starts HAProxy on free loopback ports in front of `webhookAddr` (host:port), with the shipped file,
 * logging to `logPath`; resolves once its exporter answers.
 */
export async function startHaproxy(
  webhookAddr: string,
  logPath: string,
  limits: ProxyLimits = PROXY_DEFAULTS,
  /** PROXY_DNS: the DNS server (host:port) for a name in `webhookAddr`; unset, /etc/resolv.conf's. */
  dns?: string,
): Promise<ProxyHandle> {
  if (!haproxyVersion())
    throw new Error("haproxy was not found on the PATH (Debian/Ubuntu: `sudo apt-get install -y haproxy`)");
  const port = await freePort();
  const statsPort = await freePort();
  const env = {
    ...proxyEnv(`127.0.0.1:${port}`, webhookAddr, `127.0.0.1:${statsPort}`, limits),
    ...(dns ? { PROXY_DNS: dns } : {}),
  };
  const child = spawnLogged("haproxy", "haproxy", ["-db", "-f", HAPROXY_CONFIG], env, logPath);
  const metricsUrl = `http://127.0.0.1:${statsPort}/metrics`;
  try {
    await waitForHttp(metricsUrl, child, 10_000);
  } catch (e) {
    await child.stop();
    throw e;
  }
  return { url: `http://127.0.0.1:${port}`, metricsUrl, child };
}
