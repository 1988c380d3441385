/**
 * The deployment's instructions (the `prompt` row's `system`, `system_file` and per-agent-id-glob `agents`
 * overrides): the system prompt every agent gets before its own persona.
 *
 * @module
 */
import { isAbsolute } from "node:path";
import { TerretError } from "../errors.ts";
import { z } from "zod";
import { fnmatch } from "../tools/fnmatch.ts";

/** The priority of the instructions section (reserved: it renders first, before the persona). */
export const INSTRUCTIONS_PRIORITY = -1;

/** Where a system prompt comes from: inline text or a file (read once when the row mounts), not both. */
export interface InstructionsSource {
  /** The text. */
  readonly system?: string | undefined;
  /** An absolute path to a UTF-8 file holding the text. */
  readonly system_file?: string | undefined;
}

/** An override of the instructions for the agents whose id matches `match`. */
export interface AgentInstructions extends InstructionsSource {
  /** A case-sensitive fnmatch-style glob over agent ids (`reviewer-*`). */
  readonly match: string;
}

const source = {
  system: z.string().optional().describe(
    "The system prompt's text, rendered first in every request (before the session's persona)",
  ),
  system_file: z.string().min(1).optional().describe(
    "An absolute path to a UTF-8 file holding the system prompt (read once when the row mounts); not with system",
  ),
};

/** The schema of the instructions part of the `prompt` row's config. */
export const instructionsShape = {
  ...source,
  agents: z.array(
    z.strictObject({
      match: z.string().min(1).describe("A case-sensitive glob over agent ids (`reviewer-*`)"),
      ...source,
    }),
  ).default([]).describe(
    "Per-agent overrides, first match wins: an agent whose id matches uses this system prompt instead of the " +
      "default one (an empty system gives it none)",
  ),
};

/** The instructions with every file read: the default text and the overrides in order. */
export interface ResolvedInstructions {
  readonly default: string;
  readonly agents: readonly { readonly match: string; readonly text: string }[];
}

/**
 * Reads the instructions' files (once, when the row mounts).
 *
 * @throws {TerretError} `ConfigInvalid` for a source with both `system` and `system_file` or a relative path,
 *   `InstructionsUnreadable` for a file that cannot be read
 */
export async function resolveInstructions(
  config: InstructionsSource & { readonly agents?: readonly AgentInstructions[] },
): Promise<ResolvedInstructions> {
  const defaultText = await textOf(config, "prompt");
  const agents = [];
  for (const [index, entry] of (config.agents ?? []).entries()) {
    agents.push({ match: entry.match, text: await textOf(entry, `prompt.agents[${index}]`) });
  }
  return Object.freeze({ default: defaultText, agents: Object.freeze(agents) });
}

/** The instructions text for `agentId`: the first matching override's, else the default. */
export function instructionsFor(resolved: ResolvedInstructions, agentId: string): string {
  for (const entry of resolved.agents) {
    if (fnmatch(agentId, entry.match)) return entry.text;
  }
  return resolved.default;
}

/** The files the instructions read (for the row's host permissions). */
export function instructionFiles(
  config: InstructionsSource & { readonly agents?: readonly AgentInstructions[] },
): string[] {
  return [config, ...(config.agents ?? [])].flatMap((entry) =>
    entry.system_file === undefined ? [] : [entry.system_file]
  );
}

async function textOf(entry: InstructionsSource, where: string): Promise<string> {
  if (entry.system !== undefined && entry.system_file !== undefined) {
    throw new TerretError(
      "ConfigInvalid",
      `Cannot read the instructions of ${where}: set system or system_file, not both`,
    );
  }
  if (entry.system_file === undefined) return entry.system ?? "";
  const path = entry.system_file;
  if (!isAbsolute(path)) {
    throw new TerretError(
      "ConfigInvalid",
      `Cannot read the instructions of ${where} from "${path}": system_file must be an absolute path`,
    );
  }
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    throw new TerretError(
      "InstructionsUnreadable",
      `Cannot read the instructions of ${where} from "${path}": ${(error as Error).message}`,
      { cause: error },
    );
  }
}
