// @ts-check
/**
 * A Stryker ignorer (`ignorers: ["log-calls"]` in stryker.config.mjs): no mutants inside a logging
 * statement such as `log.info({ detail }, "fill refused")` or `slog.warn(...)`. What a log line says is
 * for the operator, not a money rule; its mutants (an emptied message, an emptied field object) would
 * all survive and each cost a full run of the swap tests. The statement's surroundings (the `if`
 * deciding whether it logs, the refusal returned next to it) are still mutated.
 */
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

const LEVELS = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);
const LOGGERS = /^(log|slog|routeLog|logger)$/;

/** @param {any} path a Babel NodePath */
function isLogStatement(path) {
  if (!path.isExpressionStatement()) return false;
  const call = path.node.expression;
  // log.warn(...) or, for an optional logger, log?.warn(...)
  if (call.type !== "CallExpression" && call.type !== "OptionalCallExpression") return false;
  if (call.callee.type !== "MemberExpression" && call.callee.type !== "OptionalMemberExpression")
    return false;
  const { object, property } = call.callee;
  if (property.type !== "Identifier" || !LEVELS.has(property.name)) return false;
  if (object.type === "Identifier") return LOGGERS.test(object.name);
  // this.log.info(...), this.opts.log.warn(...), this.opts.log?.warn(...)
  return (
    object.type === "MemberExpression" &&
    object.property.type === "Identifier" &&
    LOGGERS.test(object.property.name)
  );
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "log-calls", {
    shouldIgnore: (path) =>
      isLogStatement(path) ? "a logging statement (what the operator reads, not a money rule)" : undefined,
  }),
];
