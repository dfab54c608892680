/** GET /tokens and GET /permissioned-tokens: the mints we quote, as the operator reads them every 10 min. */
import type { Hono } from "hono";
import type { TokenLists } from "../../inventory/token-lists.ts";
import type { AppEnv } from "../http/env.ts";

export function registerTokenRoutes(app: Hono<AppEnv>, lists: TokenLists): void {
  app.get("/tokens", (c) => c.json(lists.tokens()));
  app.get("/permissioned-tokens", (c) => c.json(lists.permissionedTokens()));
}
