/**
 * The `sandbox` seam: where every process Terret starts is wrapped before it spawns. Declared in core (MCP stdio
 * servers spawn through it) and implemented by `@terret/exec` providers (`none`, `docker`, `deno`).
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";

/** Options for {@linkcode Sandbox.wrap}. */
export interface WrapOptions {
  /** The working directory the program must run in (a real, absolute path inside a granted workspace). */
  readonly cwd: string;
  /** Whether the program gets a terminal (PTY). */
  readonly tty?: boolean;
  /** The program's environment (explicit; nothing ambient is added by the sandbox). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * With `tty`, the terminal size the program should start with. A provider whose terminal lives on the far side
   * (docker) applies it before the program starts, since the host PTY's size reaches it only after a resize.
   */
  readonly columns?: number;
  /** With `tty`, the terminal's rows (see `columns`). */
  readonly rows?: number;
}

/** What to actually spawn on the host, as decided by the sandbox. */
export interface WrappedCommand {
  /** The host argv (e.g. `["docker", "exec", "-i", …, ...argv]`). */
  readonly argv: readonly string[];
  /** The host working directory for the spawn. */
  readonly cwd: string;
  /** The complete host environment for the spawn: spawn with a cleared environment plus exactly this. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Signals the wrapped program's whole process tree where the host cannot reach it (inside a container);
   * called by the subprocess seam in addition to signalling the host process group. Absent when signalling the
   * host process group is enough.
   */
  readonly signal?: (signal: "SIGTERM" | "SIGKILL") => Promise<void>;
}

/**
 * A sandbox provider.
 *
 * Contract: `wrap` is the only place a final argv is built; it refuses (rejecting with `TerretError` code
 * `Denied`) a `cwd` outside the granted workspaces and anything it cannot contain, rather than running it
 * uncontained. `isolated` is true only when the provider's escape tests (read `/etc/passwd`, write outside the
 * workspace, reach the network, follow a workspace symlink out, a cwd outside the workspace) all fail inside it.
 * `workspaceReady` prepares whatever the provider needs (e.g. the container) and is idempotent.
 */
export interface Sandbox {
  /** The provider name (`"none"`, `"docker"`, `"deno"`). */
  readonly name: string;
  /** Whether programs run contained (see the contract). */
  readonly isolated: boolean;
  /** Prepares the provider for spawning (idempotent). */
  workspaceReady(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Wraps an argv for spawning on the host. */
  wrap(argv: readonly string[], options: WrapOptions): Promise<WrappedCommand>;
}

/** Paths and names a per-program sandbox grants beyond the workspace directories (each list may be empty). */
export interface SandboxGrants {
  /** Absolute paths readable beyond the workspace. */
  readonly read: readonly string[];
  /** Absolute paths writable (and readable) beyond the workspace. */
  readonly write: readonly string[];
  /** Hosts (`host` or `host:port`) the program may reach. */
  readonly net: readonly string[];
  /** Environment variable names the program may read. */
  readonly env: readonly string[];
  /** System information APIs (`hostname`, `osRelease`, …) the program may query. */
  readonly sys: readonly string[];
}

/** A sandbox built for one family of programs (a config row's override of the sandbox row). */
export interface ConfinementRequest {
  /** The provider, by name (`"deno"`, `"bwrap"`, `"none"`). */
  readonly provider: string;
  /** Who asks, for messages (`"mcp.github"`). */
  readonly owner: string;
  /** The granted workspace directories (real, absolute): the programs' cwd must be inside one. */
  readonly dirs: readonly string[];
  /** What the programs get beyond the workspace. */
  readonly grants: SandboxGrants;
  /** Stops preparing the sandbox. */
  readonly signal?: AbortSignal;
}

/** The sandbox service key (config row `sandbox`). */
export const SandboxKey: ServiceKey<Sandbox> = defineService<Sandbox>(
  "sandbox",
  "Wraps every spawned argv for the configured sandbox provider",
);
