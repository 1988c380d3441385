/**
 * The tool roster of one MCP server: reconciles what `tools/list` returned into registrations, each an effect
 * that is disposed when its tool disappears or changes.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/types"
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Logger } from "@terret/hames";
import { TerretError } from "../errors.ts";
import { canonicalJson } from "../sessions/digest.ts";
import type { McpToolOverride } from "./config.ts";
import type { StructuredContentCheck } from "./content.ts";
import type { ToolApproval, ToolConcurrency, ToolOutcome } from "../tools/tool.ts";
import { sanitiseMcpToolName } from "./names.ts";

/** A tool as the MCP client registers it. */
export interface McpToolSpec {
  /** The registered name, `mcp__<server>__<tool>`. */
  readonly name: string;
  readonly description: string;
  /** The server's JSON Schema for the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly mutating: boolean;
  readonly concurrency: ToolConcurrency;
  readonly approval: ToolApproval;
  /**
   * Runs the tool. Resolves to the result the model reads (`is_error` for a tool error, a timeout, an
   * unavailable server); rejects only with the reason of an aborted `signal`.
   */
  execute(
    args: Readonly<Record<string, unknown>>,
    options: { readonly signal?: AbortSignal },
  ): Promise<ToolOutcome>;
}

/** Registers a tool as an effect; the returned function unregisters it. */
export type RegisterTool = (spec: McpToolSpec) => () => unknown;

/** What a reconciliation changed, by registered name (each list sorted). */
export interface ReconcileReport {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
  /** Server tool names left out because they sanitise to one registered name. */
  readonly clashes: readonly string[];
  /** Server tool names left out because they require task-based execution, which this client does not speak. */
  readonly skipped: readonly string[];
  /** Server tool names the registry refused (a name another source holds, a definition it rejects). */
  readonly refused: readonly string[];
}

/** Options of {@linkcode ToolRoster}. */
export interface ToolRosterOptions {
  readonly server: string;
  /** Metadata for every tool unless overridden. */
  readonly defaults: {
    readonly approval: ToolApproval;
    readonly mutating: boolean;
    readonly concurrency: ToolConcurrency;
  };
  /** Per-tool overrides, keyed by the server's tool name. */
  readonly overrides: Readonly<Record<string, McpToolOverride>>;
  /** Whether `readOnlyHint: true` makes a tool non-mutating and parallel. */
  readonly trustAnnotations: boolean;
  readonly register: RegisterTool;
  /** Calls the server's tool (by its own name). */
  readonly call: (
    tool: string,
    args: Readonly<Record<string, unknown>>,
    options: { readonly signal?: AbortSignal },
  ) => Promise<ToolOutcome>;
  readonly logger: Logger;
}

interface Entry {
  readonly tool: string;
  readonly fingerprint: string;
  readonly unregister: () => unknown;
}

/**
 * The registered tools of one server.
 *
 * Contract: after `reconcile(tools)` resolves, exactly the listed tools are registered (under their sanitised
 * names), each with the latest description, schema and metadata; a tool that vanished is unregistered, a changed
 * one is unregistered and registered anew, an unchanged one is left alone. A tool that requires task-based
 * execution is left out (reported in `skipped`): this client does not speak MCP tasks. Two server tools that sanitise to one
 * name are a clash: with `strict` the reconciliation throws `TerretError` code `ToolNameClash` naming both and
 * changes nothing; otherwise both are left out, reported in `clashes` and logged. A registration the registry
 * refuses (`ToolExists`: another source holds the name) is thrown with `strict`, and otherwise logged and reported
 * in `refused`. Reconciliations run one at a time.
 */
export class ToolRoster {
  readonly #options: ToolRosterOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #checks = new Map<string, StructuredContentCheck>();
  readonly #ajv = new AjvJsonSchemaValidator();
  #queue: Promise<unknown> = Promise.resolve();

  /** @param options the server, its metadata policy, and how to register and call */
  constructor(options: ToolRosterOptions) {
    this.#options = options;
  }

  /** The registered names, sorted. */
  names(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** The output-schema facts of a server tool from the latest listing. */
  outputCheck(tool: string): StructuredContentCheck {
    return this.#checks.get(tool) ?? { hasOutputSchema: false };
  }

  /** Brings the registrations in line with `tools` (see the class contract). */
  reconcile(tools: readonly Tool[], strict: boolean): Promise<ReconcileReport> {
    const run = this.#queue.then(() => this.#reconcile(tools, strict));
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Unregisters every tool. */
  clear(): Promise<void> {
    const run = this.#queue.then(async () => {
      const entries = [...this.#entries.values()];
      this.#entries.clear();
      for (const entry of entries) await entry.unregister();
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  async #reconcile(tools: readonly Tool[], strict: boolean): Promise<ReconcileReport> {
    const { server } = this.#options;
    const byName = new Map<string, Tool[]>();
    const skipped: string[] = [];
    for (const tool of tools) {
      if (tool.execution?.taskSupport === "required") {
        skipped.push(tool.name);
        continue;
      }
      const name = sanitiseMcpToolName(server, tool.name);
      byName.set(name, [...(byName.get(name) ?? []), tool]);
    }
    const clashes: string[] = [];
    for (const [name, group] of byName) {
      if (group.length < 2) continue;
      const names = group.map((tool) => `"${tool.name}"`).sort();
      const message = `Cannot register MCP tools ${
        names.join(" and ")
      } of server "${server}": they all sanitise to "${name}"`;
      if (strict) throw new TerretError("ToolNameClash", message, { details: { name } });
      this.#options.logger.log("error", message);
      clashes.push(...group.map((tool) => tool.name));
      byName.delete(name);
    }
    const wanted = new Map<string, { tool: Tool; spec: McpToolSpec; fingerprint: string }>();
    for (const [name, [tool]] of byName) {
      const spec = this.#spec(name, tool!);
      const { execute: _execute, ...shape } = spec;
      const fingerprint = canonicalJson({ ...shape, output: tool!.outputSchema ?? null });
      wanted.set(name, { tool: tool!, spec, fingerprint });
    }
    const added: string[] = [];
    const removed: string[] = [];
    const changed: string[] = [];
    for (const [name, entry] of [...this.#entries]) {
      const next = wanted.get(name);
      if (next !== undefined && next.fingerprint === entry.fingerprint) continue;
      this.#entries.delete(name);
      await entry.unregister();
      (next === undefined ? removed : changed).push(name);
    }
    this.#checks.clear();
    const refused: string[] = [];
    for (const [name, { tool, spec, fingerprint }] of wanted) {
      this.#checks.set(tool.name, this.#check(tool));
      if (this.#entries.has(name)) continue;
      let unregister: () => unknown;
      try {
        unregister = this.#options.register(spec);
      } catch (error) {
        if (strict) throw error;
        this.#options.logger.log(
          "error",
          `Cannot register MCP tool "${tool.name}" of server "${server}": ${
            (error as Error).message
          }`,
        );
        refused.push(tool.name);
        if (changed.includes(name)) {
          changed.splice(changed.indexOf(name), 1);
          removed.push(name);
        }
        continue;
      }
      this.#entries.set(name, { tool: tool.name, fingerprint, unregister });
      if (!changed.includes(name)) added.push(name);
    }
    return {
      added: added.sort(),
      removed: removed.sort(),
      changed: changed.sort(),
      clashes: clashes.sort(),
      skipped: skipped.sort(),
      refused: refused.sort(),
    };
  }

  #spec(name: string, tool: Tool): McpToolSpec {
    const { defaults, overrides, trustAnnotations, call, server } = this.#options;
    const readOnly = trustAnnotations && tool.annotations?.readOnlyHint === true;
    const override = overrides[tool.name] ?? {};
    const description = tool.description?.trim() || tool.title?.trim() ||
      `Tool "${tool.name}" of MCP server "${server}"`;
    return {
      name,
      description,
      parameters: tool.inputSchema as Record<string, unknown>,
      approval: override.approval ?? defaults.approval,
      mutating: override.mutating ?? (readOnly ? false : defaults.mutating),
      concurrency: override.concurrency ?? (readOnly ? "parallel" : defaults.concurrency),
      execute: (args, options) => call(tool.name, args, options),
    };
  }

  #check(tool: Tool): StructuredContentCheck {
    if (tool.outputSchema === undefined) return { hasOutputSchema: false };
    try {
      const validator = this.#ajv.getValidator(
        tool.outputSchema as Parameters<AjvJsonSchemaValidator["getValidator"]>[0],
      );
      return {
        hasOutputSchema: true,
        validate: (value) => {
          const result = validator(value);
          return result.valid ? undefined : result.errorMessage;
        },
      };
    } catch (error) {
      this.#options.logger.log(
        "warn",
        `MCP tool "${tool.name}" of server "${this.#options.server}" has an output schema that cannot be compiled; its structured content is not validated`,
        { error },
      );
      return { hasOutputSchema: true };
    }
  }
}
