/**
 * Kept for the fill tests that import from here: the mints and the StoredQuote factory now live in
 * test/support (config.ts, quotes.ts).
 */
export { MINT } from "../support/config.ts";
export { storedQuote } from "../support/quotes.ts";
