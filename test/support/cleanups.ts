import { afterEach } from "vitest";

/** A teardown step a test registers for what it built. */
export type Cleanup = () => Promise<unknown> | unknown;

/**
 * The list a test pushes its teardown steps onto as it builds things; after each test they run, the
 * last pushed first, then `then` (if given). Call at the top level of a file or a describe block.
 */
export function cleanupsAfterEach(then?: () => Promise<void>): Cleanup[] {
  const cleanups: Cleanup[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await then?.();
  });
  return cleanups;
}
