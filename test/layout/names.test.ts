/**
 * The name check `npm run check` runs (scripts/check-names.ts): a code name a comment cites that no
 * code declares, or that is not in the file the comment names with it, fails it, shown on planted
 * files; the repository itself passes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { citedNames, nameProblems } from "../../scripts/check-names.ts";

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "names-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("name check", () => {
  it("refuses a comment citing a method no code declares", () => {
    const root = repo({
      "src/signer.ts": "export class Remote { companions() { return 1; } }\n",
      "src/issuer.ts": "/** Made by the signer (`companionsFromNowhere`). */\nexport const x = 1;\n",
    });
    expect(nameProblems(root)).toEqual([
      "src/issuer.ts: `companionsFromNowhere`: companionsFromNowhere is named nowhere in the code",
    ]);
  });

  it("refuses a name cited after a path when that file does not hold it", () => {
    const root = repo({
      "src/signer.ts": "export class Remote { companions() { return 1; } }\n",
      "src/other.ts": "export function makeThing() { return 2; }\n",
      "src/issuer.ts": "/** See src/signer.ts `makeThing`. */\nexport const x = 1;\n",
    });
    expect(nameProblems(root)).toEqual(["src/issuer.ts: `makeThing`: not in src/signer.ts"]);
  });

  it("accepts cited names that exist, dotted and called ones included", () => {
    const root = repo({
      "src/signer.ts": "export class Remote { companions() { return 1; } }\n",
      "src/issuer.ts":
        "/** src/signer.ts `companions`, `Remote.companions()`, `companions()`. */\nexport const x = 1;\n",
    });
    expect(nameProblems(root)).toEqual([]);
  });

  it("reads only code-shaped names: a plain word, a file name or an UPPER_CASE setting is not one", () => {
    expect(
      citedNames("/** `maker`, `binding.gyp`, `process.env.NAME`, `corkForTurn` */").map((c) => c.parts),
    ).toEqual([["process", "env"], ["corkForTurn"]]);
  });

  it("finds nothing to refuse in this repository", () => {
    expect(nameProblems()).toEqual([]);
  });
});
