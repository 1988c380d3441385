/**
 * The `deno` sandbox provider: runs Deno programs (a script, `deno eval`, an `npm:` package) in a child
 * `deno run` whose permissions are derived from the workspace list and the row's config.
 *
 * @module
 */
import { definePlugin, type HostPermissions, type Plugin } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { type Sandbox, SandboxKey, WorkspaceKey } from "@terret/core";
import type { WrapOptions, WrappedCommand } from "@terret/core/seams";
import { z } from "zod";
import { isAbsolute } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { containPath } from "../containment.ts";
import { isInside } from "../paths.ts";
import { checkArgv, checkEnv, containedCwd } from "./_wrap_checks.ts";
import { type DenoProgram, parseDenoProgram } from "./_deno_program.ts";
import { findEscapingLink } from "./_symlink_scan.ts";
import { hostEnv, resolveExecutable, runHostCommand } from "./_host_command.ts";
import { grantedDirs } from "../workspace.ts";

/** Environment names a program may not set: they steer the Deno runtime itself or the dynamic loader. */
const RUNTIME_ENV =
  /^(?:DENO_|LD_|DYLD_|NPM_CONFIG_|NODE_OPTIONS$|NODE_PATH$|(?:HTTPS?|ALL|NO)_PROXY$)/i;
/** Host variables passed to the runtime (operator-controlled), never taken from the program's environment. */
const RUNTIME_HOST_ENV = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "NPM_CONFIG_REGISTRY",
  "DENO_CERT",
];

/** Options for {@linkcode DenoSandbox}. */
export interface DenoSandboxOptions {
  /** The granted real directories: the only paths readable and writable. */
  readonly dirs: readonly string[];
  /** The Deno binary (default: the one running Terret). */
  readonly deno?: string;
  /**
   * Absolute paths readable beyond the workspace (default none; any makes `isolated` false). They are grants,
   * not workspaces: no cwd or entry may be in one, and they are not scanned for links leading out.
   */
  readonly read?: readonly string[];
  /** Absolute paths writable (and readable) beyond the workspace (default none; any makes `isolated` false). */
  readonly write?: readonly string[];
  /** Hosts for `--allow-net` (default none; any makes `isolated` false). */
  readonly net?: readonly string[];
  /** Variable names for `--allow-env` (default none). */
  readonly env?: readonly string[];
  /** APIs for `--allow-sys` (default none). */
  readonly sys?: readonly string[];
  /** Remote hosts modules may be imported from (default none: `--no-remote`; any makes `isolated` false). */
  readonly allowImport?: readonly string[];
  /** Whether `npm:` entries are accepted (default true). */
  readonly allowNpm?: boolean;
  /** Never download (npm packages must be cached already). */
  readonly cachedOnly?: boolean;
  /** An absolute `deno.json` for `--config` (default `--no-config`). */
  readonly configFile?: string;
  /** Entries the link scan may visit before the workspace is refused (default 200,000). */
  readonly maxScanEntries?: number;
}

/**
 * The deno provider. Permissions: `--allow-read` and `--allow-write` for exactly the workspace directories,
 * `--allow-net`/`--allow-env`/`--allow-sys` from config, never `--allow-run` or `--allow-ffi` (which would void
 * the sandbox), `--no-prompt`, `--no-remote`.
 *
 * It refuses what it cannot contain, with `Denied`: a program that is not a Deno program, a permission flag in the
 * argv, a workspace holding a symbolic link that leads out (Deno does not resolve links for its checks), an
 * environment variable that steers the runtime, a `DENO_DIR` inside a workspace.
 *
 * Deno does not check read permission for a program's static imports, so a script or `deno eval` code is loaded
 * through a bootstrap's dynamic `import()`, which is checked for the whole module graph. Consequences: in that
 * entry `import.meta.main` is false and `Deno.mainModule` is the bootstrap. An `npm:` entry runs as the main
 * module (so its `bin` runs); the package's own code is trusted for its static imports. The runtime itself may
 * download npm packages (`cachedOnly` stops it).
 */
export class DenoSandbox implements Sandbox {
  readonly name = "deno";
  readonly isolated: boolean;
  readonly #options: DenoSandboxOptions;
  readonly #dirs: readonly string[];
  #ready: Promise<{ deno: string; denoDir: string }> | undefined;

  constructor(options: DenoSandboxOptions) {
    this.#options = options;
    this.#dirs = Object.freeze([...options.dirs]);
    this.isolated = (options.net ?? []).length === 0 && (options.allowImport ?? []).length === 0 &&
      (options.read ?? []).length === 0 && (options.write ?? []).length === 0;
  }

  /** Finds the Deno binary and its cache directory, and checks the cache is not inside a workspace. */
  async workspaceReady(options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    this.#ready ??= this.#prepare(options.signal).catch((error) => {
      this.#ready = undefined;
      throw error;
    });
    await this.#ready;
  }

  async wrap(argv: readonly string[], options: WrapOptions): Promise<WrappedCommand> {
    checkArgv(argv);
    const env = checkEnv(options.env);
    // A runtime variable is the operator's: refused unless it carries the host's own value (which the runtime
    // gets anyway), so a caller forwarding the host's DENO_DIR or proxy is not taken for a program steering it.
    const refused = Object.keys(env).find((name) =>
      RUNTIME_ENV.test(name) && env[name] !== hostEnv(name)
    );
    if (refused !== undefined) {
      throw new TerretError(
        "Denied",
        `Cannot run "${
          argv[0]
        }" in the deno sandbox: the environment variable "${refused}" steers the runtime`,
      );
    }
    const cwd = await containedCwd(options.cwd, this.#dirs);
    await this.workspaceReady();
    const { deno, denoDir } = (await this.#ready)!;
    const program = parseDenoProgram(argv, deno);
    await this.#refuseEscapingLinks(argv[0]!);
    const entry = await this.#entry(program, cwd, argv);
    return {
      argv: [deno, ...this.#flags(program), ...entry, ...program.args],
      cwd,
      env: { ...env, ...runtimeEnv(denoDir) },
    };
  }

  /** The permission and loader flags every program gets (after `deno`). */
  #flags(program: DenoProgram): string[] {
    const o = this.#options;
    const write = [...this.#dirs, ...(o.write ?? [])];
    const read = [...write, ...(o.read ?? [])];
    const flags = ["run", "--no-prompt"];
    flags.push(o.configFile === undefined ? "--no-config" : `--config=${o.configFile}`);
    flags.push(
      (o.allowImport ?? []).length === 0
        ? "--no-remote"
        : `--allow-import=${o.allowImport!.join(",")}`,
    );
    if (o.cachedOnly) flags.push("--cached-only");
    if (read.length > 0) flags.push(`--allow-read=${read.join(",")}`);
    if (write.length > 0) flags.push(`--allow-write=${write.join(",")}`);
    if ((o.net ?? []).length > 0) flags.push(`--allow-net=${o.net!.join(",")}`);
    if ((o.env ?? []).length > 0) flags.push(`--allow-env=${o.env!.join(",")}`);
    if ((o.sys ?? []).length > 0) flags.push(`--allow-sys=${o.sys!.join(",")}`);
    return [...flags, ...program.flags];
  }

  async #entry(program: DenoProgram, cwd: string, argv: readonly string[]): Promise<string[]> {
    if (program.kind === "npm") {
      if (this.#options.allowNpm === false) {
        throw new TerretError(
          "Denied",
          `Cannot run "${argv.join(" ")}": npm: entries are not allowed`,
        );
      }
      return [program.entry];
    }
    let url: string;
    if (program.kind === "eval") {
      url = `data:application/typescript;base64,${encodeBase64(program.code)}`;
    } else {
      const path = program.entry.startsWith("file:") ? fileURLToPath(program.entry) : program.entry;
      const real = await containPath(path, this.#dirs, { action: "run", cwd });
      url = pathToFileURL(real).href;
    }
    // Not a literal specifier: Deno would load a literal one with the (unchecked) static graph.
    const bootstrap = `const entry = [${JSON.stringify(url)}][0];\nawait import(entry);\n`;
    return [`data:application/javascript;base64,${encodeBase64(bootstrap)}`];
  }

  async #refuseEscapingLinks(program: string): Promise<void> {
    const found = await findEscapingLink(this.#dirs, {
      maxEntries: this.#options.maxScanEntries ?? 200_000,
    });
    if (found !== undefined) {
      throw new TerretError(
        "Denied",
        `Cannot run "${program}" in the deno sandbox: the workspace holds a symbolic link that Deno's permissions cannot contain ("${found.link}": ${found.reason})`,
        { details: { link: found.link } },
      );
    }
  }

  async #prepare(signal: AbortSignal | undefined): Promise<{ deno: string; denoDir: string }> {
    const o = this.#options;
    for (const dir of [...this.#dirs, ...(o.read ?? []), ...(o.write ?? [])]) {
      if (dir.includes(",")) {
        throw new TerretError(
          "Denied",
          `Cannot grant "${dir}" to Deno programs: the path holds a comma`,
        );
      }
      if (!isAbsolute(dir)) {
        throw new TerretError(
          "Denied",
          `Cannot grant "${dir}" to Deno programs: the path is not absolute`,
        );
      }
    }
    if (o.configFile !== undefined && !isAbsolute(o.configFile)) {
      throw new TypeError(`Cannot use the Deno config "${o.configFile}": the path is not absolute`);
    }
    const deno = o.deno === undefined ? Deno.execPath() : await resolveExecutable(o.deno);
    const home: Record<string, string> = {};
    for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
      const value = hostEnv(name);
      if (value !== undefined) home[name] = value;
    }
    const out = await runHostCommand(deno, ["info", "--json", "--no-config"], {
      env: { ...home, DENO_NO_UPDATE_CHECK: "1" },
      cwd: "/",
      timeoutMs: 30_000,
      ...(signal === undefined ? {} : { signal }),
    });
    if (out.code !== 0) {
      throw new TerretError(
        "SandboxUnavailable",
        `Cannot prepare the deno sandbox: ${out.stderr.trim()}`,
      );
    }
    const denoDir = (JSON.parse(out.stdout) as { denoDir: string }).denoDir;
    if (this.#dirs.some((dir) => isInside(denoDir, dir))) {
      throw new TerretError(
        "Denied",
        `Cannot prepare the deno sandbox: Deno's cache "${denoDir}" is inside a workspace, where programs could rewrite it`,
      );
    }
    const writable = (o.write ?? []).find((dir) => isInside(denoDir, dir));
    if (writable !== undefined) {
      throw new TerretError(
        "Denied",
        `Cannot prepare the deno sandbox: Deno's cache "${denoDir}" is inside the writable grant "${writable}", where programs could rewrite it`,
      );
    }
    return { deno, denoDir };
  }
}

function encodeBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function runtimeEnv(denoDir: string): Record<string, string> {
  const env: Record<string, string> = {
    DENO_DIR: denoDir,
    DENO_NO_UPDATE_CHECK: "1",
    DENO_NO_PACKAGE_JSON: "1",
  };
  for (const name of RUNTIME_HOST_ENV) {
    const value = hostEnv(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Config of the `sandbox-deno` row. */
export interface DenoSandboxConfig {
  readonly deno?: string | undefined;
  readonly net: readonly string[];
  readonly env: readonly string[];
  readonly sys: readonly string[];
  readonly allow_import: readonly string[];
  readonly allow_npm: boolean;
  readonly cached_only: boolean;
  readonly config_file?: string | undefined;
  readonly max_scan_entries: number;
}

const hosts = z.array(z.string().min(1).regex(/^[^,\s]+$/));
const schema: z.ZodType<DenoSandboxConfig> = z.strictObject({
  deno: z.string().min(1).optional().describe("The Deno binary (default: the one running Terret)"),
  net: hosts.default([]).describe("--allow-net hosts; any makes the sandbox not isolated"),
  env: hosts.default([]).describe("--allow-env variable names"),
  sys: hosts.default([]).describe("--allow-sys APIs"),
  allow_import: hosts.default([]).describe(
    "Remote hosts modules may be imported from; any makes the sandbox not isolated",
  ),
  allow_npm: z.boolean().default(true).describe("Accept npm: entries"),
  cached_only: z.boolean().default(false).describe("Never download npm packages"),
  config_file: z.string().min(1).optional().describe("Absolute deno.json for --config"),
  max_scan_entries: z.number().int().positive().default(200_000).describe(
    "Workspace entries checked for links leading out before the workspace is refused",
  ),
});

/**
 * Provides the `deno` sandbox over the granted workspace. There is no `allow_run` or `allow_ffi` on purpose.
 *
 * **Permissions**: run of the Deno binary (the one running Terret unless `deno` is set); read of the workspace
 * directories (cwds and entries are resolved, the workspace is scanned for links leading out) and of a configured
 * binary, which a bare name looks up on `PATH` (that needs read of every `PATH` directory: only an absolute
 * `deno:` keeps read scoped); the variables locating Deno's cache (`HOME`, `DENO_DIR`, `XDG_CACHE_HOME`) and those
 * passed to the runtime (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, `NPM_CONFIG_REGISTRY`, `DENO_CERT`).
 */
export const denoSandboxPlugin: Plugin<DenoSandboxConfig> = definePlugin({
  name: "sandbox-deno",
  description:
    "Deno-permission sandbox: runs Deno programs with permissions derived from the workspace",
  inject: [WorkspaceKey],
  provides: [SandboxKey],
  config: schema,
  permissions(config, deps): HostPermissions {
    const dirs = grantedDirs(deps);
    const bare = config.deno !== undefined && !config.deno.includes("/");
    return {
      run: [config.deno ?? Deno.execPath()],
      read: bare || dirs === true
        ? true
        : [...dirs, ...(config.deno === undefined ? [] : [config.deno])],
      env: ["HOME", "DENO_DIR", "XDG_CACHE_HOME", ...RUNTIME_HOST_ENV, ...(bare ? ["PATH"] : [])],
    };
  },
  apply(ctx, config) {
    ctx.provide(
      SandboxKey,
      new DenoSandbox({
        dirs: ctx.get(WorkspaceKey).dirs,
        ...(config.deno === undefined ? {} : { deno: config.deno }),
        net: config.net,
        env: config.env,
        sys: config.sys,
        allowImport: config.allow_import,
        allowNpm: config.allow_npm,
        cachedOnly: config.cached_only,
        ...(config.config_file === undefined ? {} : { configFile: config.config_file }),
        maxScanEntries: config.max_scan_entries,
      }),
    );
  },
});
