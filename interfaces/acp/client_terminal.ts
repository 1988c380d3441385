/**
 * The `shell` seam through the editor's terminal: with `client_terminal` on the `interfaces.acp` row and a client
 * offering `terminal`, each Bash command runs in a terminal the editor creates (and shows), outside Terret's
 * sandbox.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Disposer } from "@terret/hames";
import type { Agent } from "@terret/core";
import { type Shell, ShellKey, type ShellResult, type ShellRunOptions } from "@terret/exec/process";

/** Options of {@linkcode ClientShell}. */
export interface ClientShellOptions {
  /** The session the terminals belong to. */
  readonly sessionId: string;
  /** Where each command runs (the session's `cwd`). */
  readonly cwd: string;
  /** Milliseconds before a command is killed when the call gives none. */
  readonly timeoutMs: number;
  /** Bytes of output the editor keeps when the call gives no cap. */
  readonly maxOutput: number;
}

/**
 * A {@linkcode Shell} whose commands run as `bash -c <command>` in editor terminals (`terminal/create`, then
 * `terminal/wait_for_exit`, `terminal/output` and `terminal/release`).
 *
 * Contract: every command gets a fresh terminal (no `cd` or `export` carries over: `freshSession` is always true),
 * which is released before `run` resolves, whatever happened. A timeout or an
 * abort sends `terminal/kill` and answers `timedOut`/`cancelled` with the output so far. A client that fails a
 * request rejects `run` with its message. `close(key)` kills the key's running commands.
 */
export class ClientShell implements Shell {
  readonly #client: acp.AgentContext;
  readonly #options: ClientShellOptions;
  readonly #running = new Map<string, Set<AbortController>>();

  /** @param client the connection's client side */
  constructor(client: acp.AgentContext, options: ClientShellOptions) {
    this.#client = client;
    this.#options = options;
  }

  async run(key: string, command: string, options: ShellRunOptions = {}): Promise<ShellResult> {
    const { sessionId } = this.#options;
    const { terminalId } = await this.#client.request(acp.methods.client.terminal.create, {
      sessionId,
      command: "bash",
      args: ["-c", command],
      cwd: this.#options.cwd,
      outputByteLimit: options.maxOutput ?? this.#options.maxOutput,
    });
    const stop = new AbortController();
    const running = this.#running.get(key) ?? new Set();
    this.#running.set(key, running.add(stop));
    const onAbort = (): void => stop.abort("cancelled");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(
      () => stop.abort("timeout"),
      options.timeout ?? this.#options.timeoutMs,
    );
    const ids = { sessionId, terminalId };
    try {
      const stopped = new Promise<undefined>((resolve) =>
        stop.signal.addEventListener("abort", () => resolve(undefined), { once: true })
      );
      const exit: acp.WaitForTerminalExitResponse | undefined = await Promise.race([
        this.#client.request(acp.methods.client.terminal.waitForExit, { ...ids }),
        stopped,
      ]);
      if (exit === undefined) await this.#client.request(acp.methods.client.terminal.kill, ids);
      const output: acp.TerminalOutputResponse = await this.#client.request(
        acp.methods.client.terminal.output,
        { ...ids },
      );
      return {
        output: output.output,
        truncated: output.truncated ? 1 : 0,
        exitCode: exit?.exitCode ?? null,
        timedOut: stop.signal.reason === "timeout",
        cancelled: stop.signal.reason === "cancelled",
        freshSession: true,
        sessionEnded: false,
      };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      running.delete(stop);
      if (running.size === 0) this.#running.delete(key);
      await this.#client.request(acp.methods.client.terminal.release, ids).catch(() => {});
    }
  }

  close(key: string): Promise<void> {
    for (const stop of this.#running.get(key) ?? []) stop.abort("cancelled");
    return Promise.resolve();
  }

  keys(): string[] {
    return [...this.#running.keys()];
  }
}

/** Provides a {@linkcode ClientShell} as the `shell` of `agent`'s context, so its Bash runs in editor terminals. */
export function attachEditorTerminal(
  agent: Agent,
  client: acp.AgentContext,
  options: ClientShellOptions,
): Disposer {
  return agent.ctx.provide(ShellKey, new ClientShell(client, options));
}
