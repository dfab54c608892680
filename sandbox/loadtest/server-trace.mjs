/**
 * The server side of a load test's tail (`npm run loadtest -- --trace-server`): a preload
 * (`node --import <this file>`) for the server under test, which records, while the generator drives
 * it, where each request's time went on the server's side of the socket:
 *
 *   - every HTTP request: when its `request` event fired (epoch ms, sub-ms), its `x-request-start`
 *     (the generator's scheduled send), and the time from the event to the answer's last byte handed
 *     to the kernel (`finish`);
 *   - every EVAL/EVALSHA sent through ioredis (on the quote path: the quote store's put): when it was
 *     sent and how long until its reply was handled. The reply can only be read once the event loop
 *     is free, so under load this is Redis' round trip plus the loop's wait, not Redis alone;
 *   - the event loop's utilisation (`performance.eventLoopUtilization`) per 50 ms window.
 *
 * Nothing is recorded unless SERVER_TRACE_DIR is set. On SIGUSR2, and at exit, the process writes what
 * it recorded since its last record to `<SERVER_TRACE_DIR>/<pid>-<n>.json` (n = 1, 2, ...; atomically:
 * a temporary file, then a rename) and starts afresh, so that a sweep's steps each get their own; the
 * load test sends the signal after a measured phase or step and reads the files
 * (sandbox/loadtest/server-trace.ts).
 *
 * It costs the server a listener and two closures per request and a timer every 50 ms: the load
 * test's CPU figures are taken with it on, and its report says so. A command ioredis sends again (from
 * its offline queue after a reconnection) counts once per send.
 *
 * Plain JavaScript (an ES module): the webhook runs from dist/ under plain `node`, without tsx.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

/** A growing column of float64 rows of `width` values. */
class Rows {
  constructor(width) {
    this.width = width;
    this.data = new Float64Array(width * 65_536);
    this.length = 0;
  }
  push(a, b, c) {
    if (this.length + this.width > this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    const d = this.data;
    const i = this.length;
    d[i] = a;
    d[i + 1] = b;
    if (this.width > 2) d[i + 2] = c;
    this.length += this.width;
  }
  clear() {
    this.length = 0;
  }
  toArray() {
    return Array.from(this.data.subarray(0, this.length), (x) => Math.round(x * 1000) / 1000);
  }
}

function install(dir) {
  mkdirSync(dir, { recursive: true });
  const origin = performance.timeOrigin;
  const epochNow = () => origin + performance.now();
  const requests = new Rows(3); // arrival epoch ms, x-request-start (NaN when absent), handling ms
  const storeCalls = new Rows(2); // sent epoch ms, ms until the reply was handled
  const loop = new Rows(2); // window end epoch ms, utilisation in the window

  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, req, res) {
    if (event === "request") {
      const arrived = performance.now();
      const scheduled = Number(req.headers["x-request-start"]);
      res.once("finish", () => {
        const now = performance.now();
        requests.push(origin + arrived, scheduled, now - arrived);
      });
    }
    // biome-ignore lint/complexity/noArguments: every argument, as the original receives them
    return emit.apply(this, arguments);
  };

  // ioredis as the project's server code resolves it (one module instance per path).
  try {
    const Redis = createRequire(import.meta.url)("ioredis");
    const send = Redis.prototype.sendCommand;
    Redis.prototype.sendCommand = function (command, stream) {
      if (command?.name === "evalsha" || command?.name === "eval") {
        const sent = performance.now();
        command.promise.then(
          () => storeCalls.push(origin + sent, performance.now() - sent),
          () => storeCalls.push(origin + sent, performance.now() - sent),
        );
      }
      return send.call(this, command, stream);
    };
  } catch {
    // No ioredis here (a bare node:http server): requests and the loop only.
  }

  let last = performance.eventLoopUtilization();
  setInterval(() => {
    const now = performance.eventLoopUtilization();
    loop.push(epochNow(), performance.eventLoopUtilization(now, last).utilization);
    last = now;
  }, 50).unref();

  let records = 0;
  const dump = () => {
    const file = join(dir, `${process.pid}-${++records}.json`);
    const body = JSON.stringify({
      pid: process.pid,
      requests: requests.toArray(),
      storeCalls: storeCalls.toArray(),
      loop: loop.toArray(),
    });
    writeFileSync(`${file}.tmp`, body);
    renameSync(`${file}.tmp`, file);
    requests.clear();
    storeCalls.clear();
    loop.clear();
  };
  process.on("SIGUSR2", dump);
  process.on("exit", dump);
}

const dir = process.env.SERVER_TRACE_DIR;
if (dir) install(dir);
