/**
 * The `terminals` row: named, long-lived pseudo-terminals per owner (an agent id) — a REPL or a dev server that
 * stays addressable across tool calls and turns.
 *
 * @module
 */
import {
  definePlugin,
  defineService,
  type HostPermissions,
  type Plugin,
  type ServiceKey,
} from "@terret/hames";
import { TerretError } from "../errors.ts";
import { AgentDisposed, type Subprocess, SubprocessKey, WorkspaceKey } from "@terret/core";
import type { ExitStatus, PtyHandle } from "@terret/core/seams";
import { z } from "zod";
import { TailBuffer } from "./_capture.ts";
import { ptyHostPermissions } from "./_launch.ts";

/** Options of {@linkcode Terminals.open}. */
export interface TerminalOpenOptions {
  /** The working directory (default: the first granted workspace directory). */
  readonly cwd?: string;
  /** Variables added to the subprocess seam's environment (after the row's `env`). */
  readonly env?: Readonly<Record<string, string>>;
  /** Width (default: the row's `cols`). */
  readonly cols?: number;
  /** Height (default: the row's `rows`). */
  readonly rows?: number;
}

/** Options of {@linkcode Terminals.read}. */
export interface TerminalReadOptions {
  /** When nothing is waiting, milliseconds to wait for output or the exit (default 0: return at once). */
  readonly wait?: number;
  /** Stops waiting when aborted (what arrived so far is returned). */
  readonly signal?: AbortSignal;
}

/** A terminal as {@linkcode Terminals.list} shows it. */
export interface TerminalInfo {
  readonly name: string;
  readonly argv: readonly string[];
  /** The host pid of the terminal's program (its process group id). */
  readonly pid: number;
  /** How the program ended, or null while it runs. */
  readonly exit: ExitStatus | null;
}

/** What {@linkcode Terminals.read} returns. */
export interface TerminalRead {
  /** Output since the previous read, prefixed by a `[… N bytes dropped …]` line when the buffer overflowed. */
  readonly output: string;
  /** Bytes that fell out of the buffer since the previous read. */
  readonly dropped: number;
  /** How the program ended (once it has, and its output up to the end has been read), or null. */
  readonly exit: ExitStatus | null;
}

/**
 * Named terminals per owner.
 *
 * Contract: names are unique per owner; an owner holds at most `max_terminals` terminals, exited ones included
 * until closed (`TerminalCapExceeded` past it, `TerminalExists` for a taken name). Output accumulates in a bounded
 * buffer that keeps the newest bytes; `read` returns and clears it. `close` kills the terminal's whole process
 * group, waits for it, and forgets the name; it is idempotent. `input`, `read` and `resize` of an unknown name
 * throw `TerminalNotFound`; `input` to a terminal whose program exited throws `TerminalExited`.
 */
export interface Terminals {
  /** Starts `argv` on a new terminal named `name` for `owner`. */
  open(
    owner: string,
    name: string,
    argv: readonly string[],
    options?: TerminalOpenOptions,
  ): Promise<TerminalInfo>;
  /** Types `text` into the terminal (`"\r"` is Enter, `"\x03"` is Ctrl-C). */
  input(owner: string, name: string, text: string): void;
  /** Returns the output since the last read (waiting up to `wait` ms when there is none yet). */
  read(owner: string, name: string, options?: TerminalReadOptions): Promise<TerminalRead>;
  /** Resizes the terminal. */
  resize(owner: string, name: string, cols: number, rows: number): void;
  /** Kills and forgets the terminal; idempotent. */
  close(owner: string, name: string): Promise<void>;
  /** Closes every terminal of `owner`. */
  closeAll(owner: string): Promise<void>;
  /** The owner's terminals, in opening order. */
  list(owner: string): TerminalInfo[];
}

/** The terminals service key (config row `terminals`). */
export const TerminalsKey: ServiceKey<Terminals> = defineService<Terminals>(
  "terminals",
  "Named long-lived pseudo-terminals per agent, on the subprocess seam",
);

/** Config of the `terminals` row. */
export interface TerminalsConfig {
  /** Terminals one owner may hold. */
  readonly max_terminals: number;
  /** Bytes of unread output kept per terminal (the oldest are dropped). */
  readonly buffer_bytes: number;
  /** Default width. */
  readonly cols: number;
  /** Default height. */
  readonly rows: number;
  /** Variables set in every terminal (on top of the subprocess seam's environment). */
  readonly env: Readonly<Record<string, string>>;
}

const schema: z.ZodType<TerminalsConfig, unknown> = z.object({
  max_terminals: z.number().int().positive().default(8).describe("Terminals one agent may hold"),
  buffer_bytes: z.number().int().positive().default(65_536).describe(
    "Bytes of unread output kept per terminal (oldest dropped)",
  ),
  cols: z.number().int().positive().default(120).describe("Default width"),
  rows: z.number().int().positive().default(40).describe("Default height"),
  env: z.record(z.string(), z.string()).default({ TERM: "xterm-256color" }).describe(
    "Variables set in every terminal",
  ),
});

interface Entry {
  readonly name: string;
  readonly argv: readonly string[];
  readonly buffer: TailBuffer;
  readonly waiters: Set<() => void>;
  pty: PtyHandle | undefined;
  exit: ExitStatus | null;
  closing: Promise<void> | undefined;
}

/** The {@linkcode Terminals} implementation behind the `terminals` row. */
export class TerminalRegistry implements Terminals {
  readonly #subprocess: Subprocess;
  readonly #config: TerminalsConfig;
  readonly #defaultCwd: string | undefined;
  readonly #owners = new Map<string, Map<string, Entry>>();
  #stopped = false;

  /**
   * @param subprocess starts the programs (through the sandbox, `tty: true`)
   * @param config the row's config (defaults applied)
   * @param defaultCwd where terminals start when the call does not say
   */
  constructor(subprocess: Subprocess, config: TerminalsConfig, defaultCwd: string | undefined) {
    this.#subprocess = subprocess;
    this.#config = config;
    this.#defaultCwd = defaultCwd;
  }

  async open(
    owner: string,
    name: string,
    argv: readonly string[],
    options: TerminalOpenOptions = {},
  ): Promise<TerminalInfo> {
    if (typeof name !== "string" || name === "") {
      throw new TypeError("Cannot open a terminal: the name must be a non-empty string");
    }
    if (this.#stopped) {
      throw new TerretError(
        "ServiceStopped",
        `Cannot open terminal "${name}": the terminals service is stopped`,
      );
    }
    const entries = this.#owners.get(owner) ?? new Map<string, Entry>();
    if (entries.has(name)) {
      throw new TerretError("TerminalExists", `Cannot open terminal "${name}": the name is taken`);
    }
    if (entries.size >= this.#config.max_terminals) {
      throw new TerretError(
        "TerminalCapExceeded",
        `Cannot open terminal "${name}": the limit of ${this.#config.max_terminals} terminals is reached`,
      );
    }
    const cwd = options.cwd ?? this.#defaultCwd;
    if (cwd === undefined) {
      throw new TerretError(
        "Denied",
        `Cannot open terminal "${name}": no workspace directory is granted`,
      );
    }
    const entry: Entry = {
      name,
      argv: [...argv],
      buffer: new TailBuffer(this.#config.buffer_bytes),
      waiters: new Set(),
      pty: undefined,
      exit: null,
      closing: undefined,
    };
    // The slot is taken before the spawn, so concurrent opens cannot pass the cap.
    entries.set(name, entry);
    this.#owners.set(owner, entries);
    try {
      entry.pty = await this.#subprocess.ptySpawn(argv, {
        cwd,
        env: { ...this.#config.env, ...options.env },
        cols: options.cols ?? this.#config.cols,
        rows: options.rows ?? this.#config.rows,
      });
    } catch (error) {
      this.#forget(owner, entry);
      throw error;
    }
    entry.pty.onData((data) => {
      entry.buffer.push(data);
      wake(entry);
    });
    void entry.pty.exited.then((exit) => {
      entry.exit = exit;
      wake(entry);
    });
    if (this.#stopped || entry.closing !== undefined) {
      // Closed (or the row stopped) while the program was starting: it never becomes addressable.
      await entry.pty.kill();
      this.#forget(owner, entry);
      throw new TerretError(
        "ServiceStopped",
        `Cannot open terminal "${name}": it was closed while starting`,
      );
    }
    return info(entry);
  }

  input(owner: string, name: string, text: string): void {
    const entry = this.#entry(owner, name);
    if (entry.exit !== null || entry.pty === undefined) {
      throw new TerretError(
        "TerminalExited",
        `Cannot type into terminal "${name}": its program has exited`,
      );
    }
    entry.pty.write(text);
  }

  async read(
    owner: string,
    name: string,
    options: TerminalReadOptions = {},
  ): Promise<TerminalRead> {
    const entry = this.#entry(owner, name);
    const wait = options.wait ?? 0;
    if (!(Number.isFinite(wait) && wait >= 0)) {
      throw new RangeError(`Cannot read terminal "${name}": wait must be a non-negative number`);
    }
    if (entry.buffer.size === 0 && entry.buffer.dropped === 0 && entry.exit === null && wait > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          options.signal?.removeEventListener("abort", done);
          entry.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, wait);
        entry.waiters.add(done);
        if (options.signal?.aborted) done();
        else options.signal?.addEventListener("abort", done, { once: true });
      });
    }
    const exit = entry.exit;
    const { text, dropped } = entry.buffer.take();
    return { output: text, dropped, exit };
  }

  resize(owner: string, name: string, cols: number, rows: number): void {
    this.#entry(owner, name).pty?.resize(cols, rows);
  }

  close(owner: string, name: string): Promise<void> {
    const entry = this.#owners.get(owner)?.get(name);
    if (entry === undefined) return Promise.resolve();
    entry.closing ??= (async () => {
      try {
        await entry.pty?.kill();
      } finally {
        wake(entry);
        this.#forget(owner, entry);
      }
    })();
    return entry.closing;
  }

  async closeAll(owner: string): Promise<void> {
    const entries = this.#owners.get(owner);
    if (entries === undefined) return;
    await Promise.all([...entries.keys()].map((name) => this.close(owner, name)));
  }

  list(owner: string): TerminalInfo[] {
    return [...(this.#owners.get(owner)?.values() ?? [])]
      .filter((entry) => entry.pty !== undefined)
      .map(info);
  }

  /** Stops accepting terminals and closes every one. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#owners.keys()].map((owner) => this.closeAll(owner)));
  }

  #entry(owner: string, name: string): Entry {
    const entry = this.#owners.get(owner)?.get(name);
    if (entry === undefined || entry.pty === undefined || entry.closing !== undefined) {
      throw new TerretError("TerminalNotFound", `Cannot find terminal "${name}"`);
    }
    return entry;
  }

  #forget(owner: string, entry: Entry): void {
    const entries = this.#owners.get(owner);
    if (entries?.get(entry.name) !== entry) return;
    entries.delete(entry.name);
    if (entries.size === 0) this.#owners.delete(owner);
  }
}

function wake(entry: Entry): void {
  for (const waiter of [...entry.waiters]) waiter();
}

function info(entry: Entry): TerminalInfo {
  return { name: entry.name, argv: entry.argv, pid: entry.pty!.pid, exit: entry.exit };
}

/**
 * Mounts the `terminals` seam on the `subprocess` row: named pseudo-terminals per owner, capped per owner. An
 * agent's disposal (`agent/disposed`) closes the terminals it owns (owner = agent id); stopping the row closes
 * every terminal.
 *
 * **Permissions** (for `trt permissions`): those of the `subprocess` row's `ptySpawn`, which every terminal
 * needs — `--allow-ffi` scoped to node-pty, unscoped `--allow-read`, `--allow-write` and `--allow-run` (see
 * `subprocessPlugin`).
 */
export const terminalsPlugin: Plugin<TerminalsConfig> = definePlugin({
  name: "terminals",
  description: "Named long-lived pseudo-terminals per agent, on the subprocess seam",
  inject: [SubprocessKey, WorkspaceKey],
  provides: [TerminalsKey],
  config: schema,
  permissions(): HostPermissions {
    return ptyHostPermissions();
  },
  apply(ctx, config) {
    const terminals = new TerminalRegistry(
      ctx.get(SubprocessKey),
      config,
      ctx.get(WorkspaceKey).dirs[0],
    );
    ctx.effect(() => () => terminals.shutdown(), "terminals shutdown");
    ctx.on(AgentDisposed, ({ agent_id }) => terminals.closeAll(agent_id));
    ctx.provide(TerminalsKey, terminals);
  },
});
