/**
 * `trt usage`: per-session title and usage (tokens, cached tokens, cost, utility calls, unknown steps) read from
 * the profile's session store, without booting the rest of the profile.
 *
 * @module
 */
import { createContext } from "@terret/hames";
import { SessionsKey } from "@terret/core";
import type { UsageRollup } from "@terret/core/sessions";
import { prepareRows } from "@terret/terret";
import type { VerbContext } from "./trt.ts";

/** One session's line of `trt usage`. */
export interface SessionUsage {
  readonly session_id: string;
  /** The latest `session/titled` title (`null`: none yet). */
  readonly title: string | null;
  readonly head_seq: number;
  readonly usage: UsageRollup;
}

/** `trt usage`: mounts only the `sessions.store` and `sessions` rows and prints each session's usage. */
export async function usageVerb(context: VerbContext): Promise<number> {
  const { io, args } = context;
  const resolved = await context.resolve();
  const rows = (await prepareRows(resolved, {
    env: io.env,
    allowConfigCode: context.allowConfigCode,
  })).filter((row) => row.composed.id === "sessions.store" || row.composed.id === "sessions");
  if (rows.length !== 2) {
    io.stderr(
      `trt usage: the profile "${resolved.profile.name}" mounts no session store (rows sessions.store and sessions)\n`,
    );
    return 2;
  }
  await using ctx = createContext({ mode: "production" });
  for (const row of rows) ctx.plugin(row.plugin, row.config, { id: row.composed.id });
  await ctx.idle();
  const sessions = ctx.get(SessionsKey);
  const only = args.strings.get("session");
  const ids = only === undefined ? await sessions.list() : [only];
  const lines: SessionUsage[] = [];
  for (const id of ids) {
    const head = await sessions.head(id);
    if (head === 0) {
      io.stderr(`trt usage: cannot read session "${id}": the store does not hold it\n`);
      return 2;
    }
    const titled = await sessions.read(id, { types: ["session/titled"] });
    const title = (titled.at(-1)?.payload as { title?: string } | undefined)?.title ?? null;
    lines.push({ session_id: id, title, head_seq: head, usage: await sessions.usage(id) });
  }
  if (args.booleans.has("json")) {
    io.stdout(`${JSON.stringify(lines, null, 2)}\n`);
    return 0;
  }
  io.stdout(
    "session                          in_tokens  out_tokens  cached  cost       steps  unknown  utility  title\n",
  );
  for (const { session_id, title, usage } of lines) {
    io.stdout(
      [
        session_id.padEnd(32),
        String(usage.input_tokens).padStart(9),
        String(usage.output_tokens).padStart(11),
        String(usage.cached_tokens).padStart(7),
        (usage.cost === null ? "-" : usage.cost.toFixed(6)).padStart(10),
        String(usage.steps).padStart(6),
        String(usage.unknown_steps).padStart(8),
        String(usage.utility_calls).padStart(8),
        ` ${title ?? "-"}`,
      ].join(" ") + "\n",
    );
  }
  return 0;
}
