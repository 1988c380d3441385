/**
 * `trt`, the Terret command line, as a function: arguments and injected streams, environment and working
 * directory in, an exit code out. `main.ts` wires it to the process; tests call it in-process.
 *
 * Exit codes: 0 success, 1 a runtime failure (a row failed to start), 2 a usage or config error (one clear
 * message, never a stack trace).
 *
 * @module
 */
import {
  COMPOSITION_CHECKS,
  type DoctorCheck,
  type EnvReader,
  isUserConfigError,
  type ResolvedProfile,
  type ResolveOptions,
  resolveProfile,
} from "@terret/terret";
import { type FlagSpec, parseArgs, type ParsedArgs, renderHelp, UsageError } from "./cli_args.ts";
import { doctorVerb, dumpConfigVerb, permissionsVerb } from "./inspect.ts";
import { usageVerb } from "./usage.ts";
import { acpVerb } from "./acp_verb.ts";
import { serveVerb } from "./serve.ts";
import { credentialsVerb } from "./credentials_verb.ts";
import { sandboxVerb } from "./sandbox_verb.ts";
import { mcpVerb } from "./mcp_verb.ts";
import type { PluginLike } from "@terret/hames";

/** What `trt` reads and writes; `main.ts` passes the process's, tests pass their own. */
export interface TrtIo {
  /** Writes to standard output. */
  readonly stdout: (text: string) => void;
  /** Writes to standard error. */
  readonly stderr: (text: string) => void;
  /** The environment (`TERRET_HOME`, `HOME`, and what `!env` tags read). */
  readonly env: EnvReader;
  /** The working directory relative paths resolve against. */
  readonly cwd: string;
  /** Standard input as bytes (`trt acp` reads ACP from it; `trt credentials set` reads the value here). */
  readonly stdin?: ReadableStream<Uint8Array>;
  /** Standard output as bytes (`trt acp` writes ACP to it; default: through `stdout`). */
  readonly stdoutBytes?: WritableStream<Uint8Array>;
  /** Aborting it stops `serve` gracefully (`main.ts` aborts on SIGINT and SIGTERM). */
  readonly signal?: AbortSignal;
}

/** How `trt` is composed: the doctor checks and, for tests, extra trusted bundle directories. */
export interface TrtOptions {
  /** Doctor checks, in order (default: the composition checks; the execution world appends its sandbox check). */
  readonly checks?: readonly DoctorCheck[];
  /** Built-in plugins (default: the first-party ones). */
  readonly builtins?: readonly PluginLike[];
  /** Extra trusted directories for named bundles. */
  readonly bundleDirs?: readonly (string | URL)[];
  /** How `serve --scoped` re-executes this program (default: this Deno and `Deno.mainModule`). */
  readonly self?: { readonly execPath: string; readonly mainModule: string };
}

/** A verb's parsed invocation. */
export interface VerbContext {
  /** The verb. */
  readonly verb: string;
  /** Its parsed flags. */
  readonly args: ParsedArgs;
  /** The streams. */
  readonly io: TrtIo;
  /** The composition options. */
  readonly options: TrtOptions;
  /** Resolves the profile the flags name. */
  resolve(): Promise<ResolvedProfile>;
  /** The flags as resolve options. */
  readonly resolveOptions: ResolveOptions;
  /** The profile argument (`headless` by default). */
  readonly profile: string;
  /** `--allow-config-code`. */
  readonly allowConfigCode: boolean;
  /** The doctor checks in force. */
  readonly checks: readonly DoctorCheck[];
}

const PROFILE_FLAGS: readonly FlagSpec[] = [
  { name: "profile", kind: "string", value: "NAME|PATH", help: "the profile (default: headless)" },
  {
    name: "patch",
    kind: "list",
    value: "FILE",
    help: "a patch applied last (repeatable, in order)",
  },
  {
    name: "home",
    kind: "string",
    value: "DIR",
    help: "Terret home (default: $TERRET_HOME or ~/.terret)",
  },
  {
    name: "allow-config-code",
    kind: "boolean",
    help: "allow plugins that config names by file path or URL (runs that code)",
  },
];

interface Verb {
  readonly summary: string;
  readonly details: readonly string[];
  readonly flags: readonly FlagSpec[];
  run(context: VerbContext): Promise<number>;
}

const VERBS: Readonly<Record<string, Verb>> = {
  serve: {
    summary: "Boot the profile and serve it until SIGINT or SIGTERM.",
    details: [
      "With --scoped, trt re-runs itself under exactly the permissions `trt permissions` prints, plus",
      "--no-prompt: a plugin reaching outside its grant gets Deno.errors.NotCapable.",
    ],
    flags: [
      ...PROFILE_FLAGS,
      {
        name: "scoped",
        kind: "boolean",
        help: "run under the profile's least-privilege permissions",
      },
    ],
    run: serveVerb,
  },
  "dump-config": {
    summary: "Print the resolved config tree, each row annotated with the layers that set it.",
    details: [
      "Tags are printed as written (`!env NAME`); no secret is resolved. A literal secret (a value the",
      "plugin's schema marks secret, or under a key named like one: api_key, token, password, …) is",
      "printed as -SECRET- with the layer that set it.",
    ],
    flags: PROFILE_FLAGS,
    run: dumpConfigVerb,
  },
  doctor: {
    summary:
      "Check the profile without booting it: plugins, config keys, tags, permissions, sandbox.",
    details: [
      "Refuses (without running it) a plugin named by path or URL unless --allow-config-code is given.",
      "Exits 2 when any check reports an error.",
    ],
    flags: PROFILE_FLAGS,
    run: doctorVerb,
  },
  permissions: {
    summary: "Print the minimal Deno permission flags the profile needs, one per line.",
    details: [
      "What trt itself needs (its config files, plugin modules, !env variables) is included.",
    ],
    flags: [
      ...PROFILE_FLAGS,
      {
        name: "json",
        kind: "boolean",
        help: "print the plan as JSON, with who asked for each scope",
      },
    ],
    run: permissionsVerb,
  },
  usage: {
    summary:
      "Print each session's title and usage: tokens, cached tokens, cost, utility calls, unknown steps.",
    details: [
      "Reads the profile's session store (rows sessions.store and sessions) without booting the rest.",
      "Utility calls (compaction summaries, titles) are included; a step that died before step/end is",
      "counted as unknown, not as zero.",
    ],
    flags: [
      ...PROFILE_FLAGS,
      { name: "session", kind: "string", value: "ID", help: "only this session" },
      { name: "json", kind: "boolean", help: "print JSON: [{session_id, title, head_seq, usage}]" },
    ],
    run: usageVerb,
  },
  credentials: {
    summary: "Edit the encrypted credential store: set NAME (value on stdin), list, delete NAME.",
    details: [
      "Usage: trt credentials set|list|delete [NAME] [flags]",
      "The store is the file the credentials row names (AES-256-GCM, mode 0600), keyed by",
      "TERRET_CREDENTIALS_KEY (32 bytes, base64: openssl rand -base64 32). A value is read from",
      "standard input and never printed; list prints names only.",
    ],
    flags: PROFILE_FLAGS,
    run: () => Promise.resolve(2), // dispatched with its action and name by runTrt
  },
  sandbox: {
    summary:
      "Build the docker sandbox's image from this host's binaries, without a registry: build.",
    details: [
      "Usage: trt sandbox build [--force] [flags]",
      "Builds the image the profile's sandbox row names (sandbox-docker only) with docker import from the",
      "host's own binaries; an existing image is kept unless --force. Needs a running Docker engine.",
    ],
    flags: [...PROFILE_FLAGS, {
      name: "force",
      kind: "boolean",
      help: "rebuild an existing image",
    }],
    run: () => Promise.resolve(2), // dispatched with its action by runTrt
  },
  mcp: {
    summary:
      "Start one stdio MCP server under its row's confinement and report what it was denied: doctor.",
    details: [
      "Usage: trt mcp doctor SERVER [--call TOOL [--args JSON]] [flags]",
      "Starts row mcp.SERVER's server as the row would (its own sandbox, or the sandbox row's), lists its",
      "tools, makes the --call, and prints every permission Deno denied it with the allow key that grants",
      "it. Exit 0: started and denied nothing; 1: denied something, failed to start, or the call failed;",
      "2: a usage or config error.",
    ],
    flags: [
      ...PROFILE_FLAGS,
      {
        name: "call",
        kind: "string",
        value: "TOOL",
        help: "call this tool (its name on the server)",
      },
      { name: "args", kind: "string", value: "JSON", help: "the call's arguments (a JSON object)" },
    ],
    run: () => Promise.resolve(2), // dispatched with its action and server by runTrt
  },
  acp: {
    summary: "Serve the profile to an editor over the Agent Client Protocol on stdio.",
    details: [
      "Reads ACP from stdin and writes only ACP to stdout (logs go to stderr); the socket's interfaces.* rows",
      "are not mounted. A session's cwd must lie inside a workspace directory. Serves sessions (new, load,",
      "prompt, cancel, close), modes (ask, auto-edit, read-only), permission requests, plans and the",
      "client's MCP servers; the interfaces.acp row (plugin terret-acp) opts in to the editor's files",
      "(client_fs) and terminal (client_terminal). See docs/acp.md.",
    ],
    flags: PROFILE_FLAGS,
    run: acpVerb,
  },
};

const USAGE = `Usage: trt <verb> [flags]

Verbs:
${Object.entries(VERBS).map(([name, verb]) => `  ${name.padEnd(13)}${verb.summary}`).join("\n")}

Run \`trt <verb> --help\` for a verb's flags.
`;

/**
 * Runs `trt` with `args` (without the program name).
 *
 * @returns the exit code: 0 success, 1 runtime failure, 2 usage or config error
 */
export async function runTrt(
  args: readonly string[],
  io: TrtIo,
  options: TrtOptions = {},
): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    (name === undefined ? io.stderr : io.stdout)(USAGE);
    return name === undefined ? 2 : 0;
  }
  const verb = VERBS[name];
  if (verb === undefined) {
    io.stderr(
      `trt: unknown verb "${name}" (verbs: ${Object.keys(VERBS).join(", ")}; see trt --help)\n`,
    );
    return 2;
  }
  let parsed: ParsedArgs;
  const positional: string[] = [];
  if (name === "sandbox" && rest[0] !== undefined && !rest[0].startsWith("-")) {
    positional.push(rest.shift()!);
  }
  if (name === "credentials" || name === "mcp") {
    while (positional.length < 2 && rest[0] !== undefined && !rest[0].startsWith("-")) {
      positional.push(rest.shift()!);
    }
  }
  try {
    parsed = parseArgs(name, rest, verb.flags);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`${error.message} (see trt ${name} --help)\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout(renderHelp(name, verb.summary, verb.details, verb.flags));
    return 0;
  }
  const resolveOptions: ResolveOptions = {
    env: io.env,
    cwd: io.cwd,
    patches: parsed.lists.get("patch") ?? [],
    ...(parsed.strings.has("home") ? { home: parsed.strings.get("home")! } : {}),
    ...(options.builtins === undefined ? {} : { builtins: options.builtins }),
    ...(options.bundleDirs === undefined ? {} : { bundleDirs: options.bundleDirs }),
  };
  const profile = parsed.strings.get("profile") ?? "headless";
  const context: VerbContext = {
    verb: name,
    args: parsed,
    io,
    options,
    resolveOptions,
    profile,
    allowConfigCode: parsed.booleans.has("allow-config-code"),
    checks: options.checks ?? COMPOSITION_CHECKS,
    resolve: () => resolveProfile(profile, resolveOptions),
  };
  try {
    if (name === "credentials") {
      if (positional[0] === undefined) {
        io.stderr(
          "trt credentials: an action is needed (usage: trt credentials set|list|delete [NAME])\n",
        );
        return 2;
      }
      return await credentialsVerb(context, positional[0], positional[1]);
    }
    if (name === "mcp") {
      if (positional[0] === undefined) {
        io.stderr("trt mcp: an action is needed (usage: trt mcp doctor SERVER)\n");
        return 2;
      }
      return await mcpVerb(context, positional[0], positional[1]);
    }
    if (name === "sandbox") {
      if (positional[0] === undefined) {
        io.stderr("trt sandbox: an action is needed (usage: trt sandbox build [--force])\n");
        return 2;
      }
      return await sandboxVerb(context, positional[0]);
    }
    return await verb.run(context);
  } catch (error) {
    return reportFailure(name, error, io);
  }
}

/** Prints a failure: a config error as its message alone (exit 2), anything else with its cause (exit 1). */
export function reportFailure(verb: string, error: unknown, io: TrtIo): number {
  if (isUserConfigError(error)) {
    io.stderr(`trt ${verb}: ${error.message}\n`);
    return 2;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr(`trt ${verb}: ${message}\n`);
  if (!(error instanceof Error && error.name === "TerretError") && error instanceof Error) {
    io.stderr(`${error.stack ?? ""}\n`);
  }
  return 1;
}
