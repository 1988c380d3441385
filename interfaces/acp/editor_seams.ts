/**
 * The editor's seams of one connection: per session, the client's files and terminal provided on the session
 * agent's context, as far as the server's options allow and the client advertised them.
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { Disposer } from "@terret/hames";
import type { Agent } from "@terret/core";
import { attachEditorFiles, editorFiles } from "./client_fs.ts";
import { attachEditorTerminal } from "./client_terminal.ts";

/** What {@linkcode EditorSeams} may route through the client. */
export interface EditorSeamOptions {
  /** Read, Write and Edit through the client's fs methods. */
  readonly clientFs: boolean;
  /** Bash through the client's terminals. */
  readonly clientTerminal: boolean;
}

/**
 * The client seams of one connection's sessions.
 *
 * Contract: `attach` provides them on the agent's context once per agent (again on the agent that replaces an
 * evicted one); they die with the agent, or with `detach`, after which the agent uses the host's `fs` and `shell`
 * again. Nothing is provided that the options do not allow or the client did not advertise.
 */
export class EditorSeams {
  readonly #options: EditorSeamOptions;
  readonly #attached = new Map<string, { agent: Agent; offs: Disposer[] }>();
  readonly #cwds = new Map<string, string>();

  /** @param options what may be routed through the client */
  constructor(options: EditorSeamOptions) {
    this.#options = options;
  }

  /** Records the session's `cwd` (where its terminals start). */
  setCwd(sessionId: string, cwd: string): void {
    this.#cwds.set(sessionId, cwd);
  }

  /** Provides the client's seams on `agent`'s context (a no-op when already done for this agent). */
  attach(agent: Agent, client: acp.AgentContext, capabilities: acp.ClientCapabilities = {}): void {
    const sessionId = agent.session_id;
    if (this.#attached.get(sessionId)?.agent === agent) return;
    const offs: Disposer[] = [];
    const editor = this.#options.clientFs
      ? editorFiles(client, sessionId, capabilities.fs)
      : undefined;
    const files = editor === undefined ? undefined : attachEditorFiles(agent, editor);
    if (files !== undefined) offs.push(files);
    const cwd = this.#cwds.get(sessionId);
    if (this.#options.clientTerminal && capabilities.terminal === true && cwd !== undefined) {
      offs.push(
        attachEditorTerminal(agent, client, {
          sessionId,
          cwd,
          timeoutMs: 120_000,
          maxOutput: 32_768,
        }),
      );
    }
    if (offs.length > 0) this.#attached.set(sessionId, { agent, offs });
  }

  /** Withdraws the session's client seams. */
  async detach(sessionId: string): Promise<void> {
    const entry = this.#attached.get(sessionId);
    this.#attached.delete(sessionId);
    for (const off of entry?.offs ?? []) await off();
  }

  /** Withdraws every session's client seams. */
  async detachAll(): Promise<void> {
    await Promise.all([...this.#attached.keys()].map((sessionId) => this.detach(sessionId)));
  }
}
