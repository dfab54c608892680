/**
 * The one argument parser of every command in package.json: `--help` (or `-h`) prints the command's
 * usage and exits 0; an unknown flag, a missing value or an unexpected argument is a usage error that
 * names the problem and lists the known flags, exit 64 (EX_USAGE). Built on node:util's parseArgs.
 */
import { parseArgs as nodeParseArgs } from "node:util";

export interface FlagSpec {
  type: "boolean" | "string";
  short?: string;
  description: string;
  /** Default for a string flag, shown in the usage. */
  default?: string;
  /** Placeholder for a string flag's value in the usage, e.g. "N" or "URL". */
  value?: string;
}

export interface Usage {
  /** How it is run, e.g. "npm run doctor". */
  command: string;
  /** What it does; may span lines. */
  summary: string;
  flags: Readonly<Record<string, FlagSpec>>;
  /** Positional arguments, e.g. "[baseUrl] [apiKey]"; unset: none are accepted. */
  positionals?: string;
  /** Extra lines after the flags (environment variables, examples). */
  notes?: string;
}

type Values<F extends Usage["flags"]> = {
  -readonly [K in keyof F]: F[K] extends { type: "boolean" }
    ? boolean
    : F[K] extends { default: string }
      ? string
      : string | undefined;
};

export interface Parsed<U extends Usage> {
  values: Values<U["flags"]>;
  positionals: string[];
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

const HELP: FlagSpec = { type: "boolean", short: "h", description: "print this help and exit" };

const flagName = (name: string, spec: FlagSpec) =>
  `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""}`;

/** The usage text `--help` prints. */
export function formatUsage(usage: Usage): string {
  const flags = { ...usage.flags, help: HELP };
  const names = Object.entries(flags).map(([n, s]) => flagName(n, s));
  const width = Math.max(...names.map((n) => n.length));
  const lines = [
    `usage: ${usage.command}${usage.command.startsWith("npm ") && (Object.keys(usage.flags).length || usage.positionals) ? " --" : ""}${Object.keys(usage.flags).length ? " [flags]" : ""}${usage.positionals ? ` ${usage.positionals}` : ""}`,
    "",
    usage.summary,
    "",
    "flags:",
    ...Object.values(flags).map(
      (s, i) =>
        `  ${(names[i] ?? "").padEnd(width)}  ${s.description}${s.default !== undefined ? ` (default ${s.default})` : ""}`,
    ),
  ];
  if (usage.notes) lines.push("", usage.notes);
  return `${lines.join("\n")}\n`;
}

const knownFlags = (usage: Usage) =>
  Object.entries({ ...usage.flags, help: HELP })
    .map(([n, s]) => flagName(n, s))
    .join(", ");

/**
 * Parses `argv` (without node and the script). Returns "help" when help was asked for; throws
 * UsageError for anything it does not know.
 */
export function parseArgv<U extends Usage>(argv: readonly string[], usage: U): Parsed<U> | "help" {
  const options: Record<string, { type: "boolean" | "string"; short?: string; default?: string }> = {};
  for (const [name, spec] of Object.entries({ ...usage.flags, help: HELP })) {
    options[name] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.default !== undefined ? { default: spec.default } : {}),
    };
  }
  // Help wins over every other problem: `cmd --bogus --help` still prints the usage.
  if (argv.includes("--help") || argv.includes("-h")) return "help";
  let parsed: ReturnType<typeof nodeParseArgs>;
  try {
    parsed = nodeParseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: usage.positionals !== undefined,
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const arg = /'([^']*)'/.exec(err.message)?.[1];
    const what =
      err.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION"
        ? `unknown flag ${arg ?? ""}`.trim()
        : err.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL"
          ? `unexpected argument ${arg ?? ""} (this command takes no arguments)`
          : err.message.split(". ")[0];
    throw new UsageError(`${usage.command}: ${what}; known flags: ${knownFlags(usage)}`);
  }
  const values = { ...parsed.values } as Record<string, unknown>;
  for (const [name, spec] of Object.entries(usage.flags)) {
    if (spec.type === "boolean") values[name] = values[name] === true;
  }
  delete values.help;
  return { values: values as Values<U["flags"]>, positionals: parsed.positionals };
}

/** parseArgv for a command's entry point: prints the usage and exits 0, or the error and exits 64. */
export function parseArgs<U extends Usage>(argv: readonly string[], usage: U): Parsed<U> {
  let parsed: Parsed<U> | "help";
  try {
    parsed = parseArgv(argv, usage);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    const help = `${usage.command}${usage.command.startsWith("npm ") ? " --" : ""} --help`;
    process.stderr.write(`${e.message}\n(${help} for the usage)\n`);
    process.exit(64);
  }
  if (parsed === "help") {
    process.stdout.write(formatUsage(usage));
    process.exit(0);
  }
  return parsed;
}
