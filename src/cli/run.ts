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
      if (e instanceof ConfigError) {
        console.error(`configuration error, not starting:\n${e.message}`);
        process.exit(78);
      }
      if (e instanceof StartupError) {
        console.error(`cannot start: ${e.message}`);
        process.exit(69);
      }
      console.error(e);
      process.exit(1);
    },
  );
}
