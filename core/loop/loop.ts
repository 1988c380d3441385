/**
 * The `loop` service: Terret's default driver, itself a plugin (row `loop`) that another driver can replace.
 *
 * @module
 */
import { z } from "zod";
import { type HostPermissions, Service, type ServiceKey } from "@terret/hames";
import { type Driver, LoopKey, type TurnOutcome, type TurnRun } from "../agents/driver.ts";
import { ModelRoleSchema } from "../llm/schemas.ts";
import type { ModelRole } from "../llm/vocabulary.ts";
import { SessionsKey } from "../sessions/sessions.ts";
import { runTurn } from "./_turn.ts";

/** The `loop` row's config. */
export interface LoopConfig {
  /** The most steps one turn may take; one more ends the turn `failed` (`MaxSteps`). */
  readonly max_steps: number;
  /** The model role the loop's requests go to (an `agent/request` listener may change it per request). */
  readonly role: ModelRole;
  /**
   * Replacement markers beyond the ones registered scrubbers declare: resume refuses to re-execute an owed tool
   * call whose logged name or arguments contain one.
   */
  readonly redaction_markers: readonly string[];
}

/** The `loop` row's config schema. */
export const loopConfig: z.ZodType<LoopConfig> = z.strictObject({
  max_steps: z.number().int().min(1).max(10_000).default(25).describe(
    "The most steps (model requests) one turn may take; a turn that would take one more ends with turn/end " +
      "status failed (MaxSteps)",
  ),
  role: ModelRoleSchema.default("main").describe(
    "The model role requests go to (an agent/request listener may route a request elsewhere)",
  ),
  redaction_markers: z.array(z.string().min(1)).default([]).describe(
    "Replacement markers, beyond those registered scrubbers declare, that make resume refuse to re-execute an " +
      "owed tool call whose logged name or arguments contain one",
  ),
}) as z.ZodType<LoopConfig>;

/**
 * The default driver (plugin `terret-loop`, row `loop`, service key `loop`): runs the turn flow of plan §2.4 for
 * whichever agent the `agents` service hands it (see `docs/loop.md`).
 *
 * Contract: that of {@linkcode Driver}. Services are resolved at each step through the agent's forked context
 * (`llm`, `tools`, `prompt`, `workspace`: none is required to mount the loop; a turn without an `llm` fails with
 * `LlmMissing`), and every extension point is dispatched on that fork. Config changes apply from the next turn.
 */
export class AgentLoop extends Service<LoopConfig> implements Driver {
  /** The plugin name rows use. */
  static readonly pluginName = "terret-loop";
  /** One line for the config catalog. */
  static readonly description =
    "The default driver (row loop): the canonical turn flow, the tool barrier, max_steps, cancellation, resume.";
  /** The service key (`loop`). */
  static readonly key: ServiceKey<Driver> = LoopKey;
  /** The loop writes the log. */
  static readonly inject: readonly ServiceKey<unknown>[] = [SessionsKey];
  /** The config schema. */
  static readonly config: z.ZodType<LoopConfig> = loopConfig;

  /** No host permission of its own: the model adapter, the store and the tools reach the host. */
  static permissions(_config: LoopConfig): HostPermissions {
    return {};
  }

  /** Applies a new config in place; running turns keep the one they started with. */
  override reconfigure(_config: LoopConfig): void {}

  runTurn(run: TurnRun): Promise<TurnOutcome> {
    return runTurn(
      { ctx: this.ctx, sessions: this.ctx.get(SessionsKey), config: this.config },
      run,
    );
  }
}
