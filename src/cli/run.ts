/**
 * How every command-line entry point ends: its exit code, or 78 (EX_CONFIG) with the configuration
 * problem named, or 69 (EX_UNAVAILABLE) with one line naming the dependency that cannot be reached
 * (setting, address, cause; no stack trace), or 1 with the error.
 */
import { ConfigError } from "../../config/load.ts";
import { StartupError } from "../errors/startup.ts";

export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (e) => {
      const known = fatalOf(e);
      if (known) {
        console.error(known.text);
        process.exit(known.code);
      }
      console.error(e);
      process.exit(1);
    },
  );
}

/** A configuration problem (78) or an unreachable dependency (69) as its exit code and its text. */
export function fatalOf(e: unknown): { code: number; text: string } | undefined {
  if (e instanceof ConfigError) return { code: 78, text: `configuration error, not starting:\n${e.message}` };
  if (e instanceof StartupError) return { code: 69, text: `cannot start: ${e.message}` };
  return undefined;
}
