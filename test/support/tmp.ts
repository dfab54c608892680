/** Scratch folders for tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/**
 * A fresh folder under the OS temp dir, removed after all the file's tests. Call at the top level of
 * the file.
 */
export function fileTempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
