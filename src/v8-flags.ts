/**
 * The V8 settings the webhook runs with, set before any other module loads (src/main.ts imports this
 * first; `setFlagsFromString` acts as the same `node` flag would, and reaches the image, `npm start`
 * and every cluster worker alike).
 *
 * Allocation-site pretenuring off: V8 otherwise learns from the few request objects alive at a young
 * collection to allocate all of that site's objects in the old generation, where they pile up until a
 * full collection, which is what sets the quote's tail latency (measured in docs/capacity.md).
 */
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--no-allocation-site-pretenuring");
