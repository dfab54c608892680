/**
 * The OpenAPI 3.1 document of the webhook we implement (docs/contract.md describes it in prose), served
 * at GET /openapi.json outside the operator's base path. Every request and response schema in it is
 * generated from the zod schema the service validates or answers with (zod 4's `z.toJSONSchema`, JSON
 * Schema 2020-12, which is OpenAPI 3.1's own dialect), so the document cannot drift from the code.
 *
 * `OPERATOR_ROUTES` is the one list of the operator's routes; test/http/openapi.test.ts checks that the
 * app serves exactly these, and that the document validates as OpenAPI 3.1.
 */
import { z } from "zod";
import { errorBodySchema, tokenListSchema } from "./common.ts";
import { quoteRequestSchema, quoteResponseSchema } from "./quote.ts";
import { swapRequestSchema, swapResponseSchema } from "./swap.ts";

type Schemas = Record<string, z.ZodType>;

/** The schemas the document names, under #/components/schemas. */
const SCHEMAS = {
  QuoteRequest: quoteRequestSchema,
  QuoteResponse: quoteResponseSchema,
  SwapRequest: swapRequestSchema,
  SwapResponse: swapResponseSchema,
  TokenList: tokenListSchema,
  ErrorBody: errorBodySchema,
} satisfies Schemas;
type SchemaName = keyof typeof SCHEMAS;

/** What a request is parsed from (input) and what an answer is built as (output). */
const DIRECTION: Record<SchemaName, "input" | "output"> = {
  QuoteRequest: "input",
  QuoteResponse: "output",
  SwapRequest: "input",
  SwapResponse: "output",
  TokenList: "output",
  ErrorBody: "output",
};

export interface OperatorRoute {
  method: "get" | "post";
  /** Path under the operator's base path. */
  path: string;
  summary: string;
  request?: SchemaName;
  /** Status -> [description, body schema]. */
  responses: Record<string, [string, SchemaName]>;
  /** Extra headers the route reads. */
  headers?: { name: string; description: string }[];
}

const UNAUTHORIZED: [string, SchemaName] = [
  "X-API-KEY missing or wrong (only when API_KEY is set)",
  "ErrorBody",
];
const TOO_LARGE: [string, SchemaName] = ["body larger than limits.maxBodyBytes", "ErrorBody"];
const MALFORMED: [string, SchemaName] = ["malformed body; the message names the field", "ErrorBody"];

const OPERATOR_ROUTES: readonly OperatorRoute[] = [
  {
    method: "get",
    path: "/tokens",
    summary: "Mints we quote (the operator re-reads this list every 10 minutes)",
    responses: { "200": ["mint addresses", "TokenList"], "401": UNAUTHORIZED },
  },
  {
    method: "get",
    path: "/permissioned-tokens",
    summary: "Mints we quote only as a permissioned maker",
    responses: { "200": ["mint addresses", "TokenList"], "401": UNAUTHORIZED },
  },
  {
    method: "post",
    path: "/quote",
    summary: "Price one order; 404 whenever we do not quote it (never penalised)",
    request: "QuoteRequest",
    headers: [
      { name: "x-request-start", description: "when the operator sent the request (ms since the epoch)" },
      { name: "x-request-timeout", description: "the operator's budget for the answer (ms, 250 by default)" },
    ],
    responses: {
      "200": ["the quote, stored for the swap that may follow", "QuoteResponse"],
      "400": MALFORMED,
      "401": UNAUTHORIZED,
      "404": [
        "no quote: unknown token or pair, size, inventory, stale price, paused, or too little budget left",
        "ErrorBody",
      ],
      "413": TOO_LARGE,
    },
  },
  {
    method: "post",
    path: "/swap",
    summary: "Check the taker-signed fill against our quote, co-sign it as fee payer and send it",
    request: "SwapRequest",
    responses: {
      "200": ["accepted (with the signature) or rejected (with the reason)", "SwapResponse"],
      "400": MALFORMED,
      "401": UNAUTHORIZED,
      "413": TOO_LARGE,
    },
  },
];

function jsonSchema(name: SchemaName): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(SCHEMAS[name], {
    target: "draft-2020-12",
    io: DIRECTION[name],
    // Refinements (base58 keys, u64 bounds) cannot be written in JSON Schema; the type still is.
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return schema;
}

const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` });

/** The document for a deployment whose operator routes live under `basePath` ("" for the root). */
export function openApiDocument(basePath: string, version = "0.1.0"): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of OPERATOR_ROUTES) {
    const responses = Object.fromEntries(
      Object.entries(r.responses).map(([status, [description, schema]]) => [
        status,
        { description, content: { "application/json": { schema: ref(schema) } } },
      ]),
    );
    const full = `${basePath}${r.path}`;
    paths[full] ??= {};
    paths[full][r.method] = {
      operationId: `${r.method}${r.path.replace(/(^|[/-])(\w)/g, (_m, _s, ch: string) => ch.toUpperCase())}`,
      summary: r.summary,
      ...(r.headers
        ? {
            parameters: r.headers.map((h) => ({
              name: h.name,
              in: "header",
              required: false,
              description: h.description,
              schema: { type: "string" },
            })),
          }
        : {}),
      ...(r.request
        ? { requestBody: { required: true, content: { "application/json": { schema: ref(r.request) } } } }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "RFQ market-maker webhook",
      version,
      description:
        "The maker's side of the aggregator's RFQ router (contract V1). Amounts are u64 integers in the " +
        'token\'s smallest units, carried as strings. Every non-200 answer has the body {"message"}. ' +
        "See docs/contract.md.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }, {}],
    paths,
    components: {
      schemas: Object.fromEntries((Object.keys(SCHEMAS) as SchemaName[]).map((n) => [n, jsonSchema(n)])),
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "X-API-KEY",
          description: "required when the deployment sets API_KEY",
        },
      },
    },
  };
}
