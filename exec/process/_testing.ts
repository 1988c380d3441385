/**
 * Test fixtures for the process seams: a context with a workspace over a temp dir, a sandbox, and the process
 * rows; a recording sandbox; and process-table probes. Not exported from the package.
 *
 * @module
 */
import { createContext, definePlugin, type Plugin, type PluginLike } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { Loader, type Row } from "@terret/hames";
import type { Context } from "@terret/hames";
import { type Sandbox, SandboxKey, WorkspaceKey } from "@terret/core";
import type { WrapOptions } from "@terret/core/seams";
import { workspacePlugin } from "../workspace.ts";
import { noneSandboxPlugin } from "../sandbox/none.ts";
import { isInside } from "../paths.ts";

/** A mounted execution world over a temp workspace. */
export interface World extends AsyncDisposable {
  readonly ctx: Context;
  readonly loader: Loader;
  /** The workspace directory (a real path). */
  readonly dir: string;
}

/** Options of {@linkcode mountWorld}. */
export interface WorldOptions {
  /** The sandbox row's plugin and config (default: `none`). */
  readonly sandbox?: { readonly plugin: PluginLike; readonly config?: unknown };
  /** Further rows (subprocess, shell, terminals) in any order. */
  readonly rows: readonly Row[];
}

/** Mounts `workspace` (a fresh temp dir), a sandbox and `rows`; disposing tears all down and removes the dir. */
export async function mountWorld(options: WorldOptions): Promise<World> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-procs-" }));
  const ctx = createContext({ mode: "test" });
  const loader = new Loader(ctx);
  const sandbox = options.sandbox ?? {
    plugin: noneSandboxPlugin,
    config: { acknowledge_unsandboxed: true },
  };
  try {
    await loader.load([
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
      { id: "sandbox", plugin: sandbox.plugin, config: sandbox.config },
      ...options.rows,
    ]);
  } catch (error) {
    await ctx.dispose();
    await Deno.remove(dir, { recursive: true });
    throw error;
  }
  return {
    ctx,
    loader,
    dir,
    async [Symbol.asyncDispose]() {
      await ctx.dispose();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** One call the recording sandbox saw (`columns` and `rows` only when the caller passed them). */
export interface WrapCall {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly tty: boolean;
  readonly columns?: number;
  readonly rows?: number;
}

/**
 * A sandbox that records every `wrap` and marks what it wraps: the host argv becomes
 * `env SANDBOX_MARK=recorder <argv>`, so a child can prove it was started from the wrapped command, and the wrapped
 * environment is the given one plus `SANDBOX_ENV=wrapped` minus `DROPPED_BY_SANDBOX`, so a child can prove it got
 * exactly the wrapped environment. It refuses a cwd outside the workspace like every provider. With `hooked`,
 * wrapped commands carry a `signal` hook that records `"<argv[0]>:<signal>"`.
 */
export function recordingSandbox(calls: WrapCall[], hooked?: string[]): Plugin<unknown> {
  return definePlugin({
    name: "sandbox-recording",
    inject: [WorkspaceKey],
    provides: [SandboxKey],
    apply(ctx) {
      const workspace = ctx.get(WorkspaceKey);
      const sandbox: Sandbox = {
        name: "recording",
        isolated: false,
        workspaceReady: () => Promise.resolve(),
        wrap(argv: readonly string[], options: WrapOptions) {
          calls.push({
            argv: [...argv],
            cwd: options.cwd,
            tty: options.tty ?? false,
            ...(options.columns === undefined ? {} : { columns: options.columns }),
            ...(options.rows === undefined ? {} : { rows: options.rows }),
          });
          if (!workspace.dirs.some((dir) => isInside(options.cwd, dir))) {
            return Promise.reject(new TerretError("Denied", `Cannot run in "${options.cwd}"`));
          }
          const { DROPPED_BY_SANDBOX: _dropped, ...env } = options.env ?? {};
          const wrapped = {
            argv: ["env", "SANDBOX_MARK=recorder", ...argv],
            cwd: options.cwd,
            env: { ...env, SANDBOX_ENV: "wrapped" },
          };
          if (hooked === undefined) return Promise.resolve(wrapped);
          return Promise.resolve({
            ...wrapped,
            signal: (signal: string) => {
              hooked.push(`${argv[0]}:${signal}`);
              return Promise.resolve();
            },
          });
        },
      };
      ctx.provide(SandboxKey, sandbox);
    },
  });
}

/**
 * The pids of live (not zombie) processes whose process group is `pgid`, from `ps`, once a signal sent to them has
 * had time to land: a SIGKILL'd process lingers until the kernel schedules it (long on a loaded machine), so this
 * polls until none is left, for at most `ms`, and returns what is still alive then. A process nobody signalled is
 * still returned, after the deadline.
 */
export function liveInGroup(pgid: number, ms = 5_000): Promise<number[]> {
  return survivors((row) => row.pgid === pgid, ms);
}

/** The subset of `pids` still alive (not zombies) once signals have landed (see {@linkcode liveInGroup}). */
export function liveOf(pids: readonly number[], ms = 5_000): Promise<number[]> {
  return survivors((row) => pids.includes(row.pid), ms);
}

async function survivors(
  match: (row: { pid: number; pgid: number }) => boolean,
  ms: number,
): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const live = (await psRows()).filter((row) => match(row) && !row.stat.startsWith("Z"))
      .map((row) => row.pid);
    if (live.length === 0 || Date.now() > deadline) return live;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function psRows(): Promise<{ pid: number; pgid: number; stat: string }[]> {
  const output = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,pgid=,stat="],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return new TextDecoder().decode(output.stdout).trim().split("\n").map((line) => {
    const [pid, pgid, stat] = line.trim().split(/\s+/);
    return { pid: Number(pid), pgid: Number(pgid), stat: stat ?? "" };
  });
}

/**
 * Waits until `check` returns true, polling every 10 ms; fails after `ms` (a deadline, not a timing claim). The one
 * polling wait of the test suites (exec's, the MCP and WebSocket integration tests).
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 15_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
