/**
 * The Node.js this service needs: package.json's `engines` (>= 24.11, the LTS line of `.nvmrc`). An
 * older Node runs it, silently and wrongly (Node 20 ignored SIGTERM under `npm start` for minutes):
 * importing this module first (src/main.ts, after only its V8 settings; src/signer/main.ts) refuses
 * one with a single line and exit 78 before any other module runs. It imports nothing, so it runs on
 * any Node that loads ES modules.
 */

/** package.json's `engines.node`, as [major, minor] (a test keeps the two equal). */
export const MIN_NODE: readonly [number, number] = [24, 11];

/** The refusal for `version` (process.versions.node) below `min`, or undefined when it will do. */
export function nodeVersionProblem(
  version: string = process.versions.node,
  min: readonly [number, number] = MIN_NODE,
): string | undefined {
  const [major = 0, minor = 0] = version.split(".").map((n) => Number.parseInt(n, 10));
  if (major > min[0] || (major === min[0] && minor >= min[1])) return undefined;
  return (
    `cannot start: Node.js ${version} is older than this service needs (>= ${min[0]}.${min[1]}, package.json "engines"): ` +
    `install Node.js ${min[0]} (.nvmrc; e.g. \`nvm install\`) and run it again`
  );
}

const problem = nodeVersionProblem();
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(78);
}
