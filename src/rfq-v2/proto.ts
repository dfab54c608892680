/**
 * The operator's RFQ v2 gRPC service, loaded from market_maker.proto beside this file (the build copies
 * it into dist/). Fields keep the proto's snake_case; 64-bit integers travel as decimal strings and
 * enums as their names.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

const PROTO_FILE = join(dirname(fileURLToPath(import.meta.url)), "market_maker.proto");

const definition = loadSync(PROTO_FILE, {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  market_maker: { MarketMakerIngestionService: grpc.ServiceClientConstructor };
};
export const IngestionClient = loaded.market_maker.MarketMakerIngestionService;
export const INGESTION_SERVICE = IngestionClient.service;

export type Cluster = "CLUSTER_UNSPECIFIED" | "CLUSTER_MAINNET" | "CLUSTER_DEVNET";
export type UpdateType =
  | "UPDATE_TYPE_UNSPECIFIED"
  | "UPDATE_TYPE_NEW"
  | "UPDATE_TYPE_UPDATED"
  | "UPDATE_TYPE_EXPIRED"
  | "UPDATE_TYPE_REJECTED";
export type SwapMessageType =
  | "SWAP_MESSAGE_TYPE_PING"
  | "SWAP_MESSAGE_TYPE_PONG"
  | "SWAP_MESSAGE_TYPE_CONNECTION_READY"
  | "SWAP_MESSAGE_TYPE_SWAP_AVAILABLE"
  | "SWAP_MESSAGE_TYPE_SWAP_SUBMIT"
  | "SWAP_MESSAGE_TYPE_TRANSACTION_CONFIRMED"
  | "SWAP_MESSAGE_TYPE_ERROR";

export interface TokenMsg {
  address: string;
  decimals: number;
  symbol: string;
  owner: string;
}
export interface PriceLevelMsg {
  volume: string;
  price: string;
}
export interface MarketMakerQuoteMsg {
  timestamp: string;
  sequence_number: string;
  quote_expiry_time: string;
  maker_id: string;
  maker_address: string;
  lot_size_base: string;
  cluster: Cluster;
  token_pair: { base_token: TokenMsg; quote_token: TokenMsg };
  bid_levels: PriceLevelMsg[];
  ask_levels: PriceLevelMsg[];
}
export interface QuoteUpdateMsg {
  update_type: UpdateType;
  status_message?: string;
}
export interface MarketMakerSwapMsg {
  message_type: SwapMessageType;
  swap_uuid: string;
  signed_transaction: string;
}
export interface SwapUpdateMsg {
  message_type: SwapMessageType;
  swap_uuid?: string;
  unsigned_transaction?: string;
  transaction_signature?: string;
  status_message?: string;
}
export interface SequenceNumberResponseMsg {
  success: boolean;
  last_sequence_number: string;
  message: string;
}
