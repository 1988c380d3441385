/**
 * The prompt is byte-stable: the same sections and env give the same bytes whatever the registration order, and
 * the bytes are the committed golden file. Regenerate it (after an intended change) with
 * `UPDATE_GOLDEN=1 deno test -A tests/prompt_golden_test.ts`.
 */
import assert from "node:assert/strict";
import { type Context, createContext } from "@terret/hames";
import { amendPersona } from "@terret/core/prompt";
import {
  memoryStorePlugin,
  PromptAssembler,
  PromptKey,
  type PromptSection,
  SessionsKey,
  sessionsPlugin,
} from "@terret/core";

const GOLDEN = new URL("./golden/prompt_system.txt", import.meta.url);

const SECTIONS: readonly PromptSection[] = [
  {
    name: "environment",
    priority: 100,
    render: (env) =>
      [
        "# Environment",
        `- model: ${env.model ?? "unknown"}`,
        `- working directories: ${env.workdirs.join(", ") || "none"}`,
        `- vision: ${env.capabilities?.vision === true ? "yes" : "no"}`,
      ].join("\n"),
  },
  {
    name: "tools.shell",
    priority: 200,
    render: (env) =>
      env.tools.includes("Bash")
        ? "# Shell\nBash runs in a persistent shell: cd and exports carry over between calls.\r\n"
        : undefined,
  },
  {
    name: "tools.web",
    priority: 200,
    render: (env) => env.tools.includes("WebFetch") ? "# Web\nWebFetch is available." : undefined,
  },
  {
    name: "conventions",
    priority: 300,
    render: (env) =>
      `# Conventions\nWrite in ${
        env.vars.language ?? "English"
      }; café ☕ and 日本語 stay as they are.   `,
  },
  { name: "closing", priority: 900, render: () => "Stop when nothing is owed." },
];

async function assembled(order: readonly PromptSection[]): Promise<Uint8Array> {
  await using ctx = createContext({ mode: "test" });
  ctx.plugin(memoryStorePlugin, {});
  ctx.plugin(sessionsPlugin, {});
  ctx.plugin(PromptAssembler, {});
  await ctx.idle();
  const sessions = ctx.get(SessionsKey);
  await sessions.create({
    session_id: "golden",
    meta: { persona: "You are Ada, a careful release engineer.\nYou never guess." },
  });
  await amendPersona(sessions, "golden", { text: "Prefer small commits." });
  await amendPersona(sessions, "golden", { text: "Report figures with their command." });
  const prompt = ctx.get(PromptKey);
  const agent: Context = ctx.fork("agent");
  for (const section of order) prompt.register(ctx, section);
  prompt.register(agent, {
    name: "agent.role",
    priority: 150,
    render: (env) => `# Role\nYou are agent ${env.agent_id}.`,
  });
  const input = {
    session_id: "golden",
    agent_id: "release-1",
    model: "anthropic/claude-sonnet-4",
    capabilities: {
      tools: true,
      vision: true,
      thinking: false,
      caching: true,
      maxContextTokens: 200_000,
    },
    tools: ["Bash", "Read"],
    workdirs: ["/srv/app"],
    vars: { language: "English" },
  };
  const first = await prompt.assemble(agent, input);
  const second = await prompt.assemble(agent, input);
  assert.equal(second, first);
  return new TextEncoder().encode(first);
}

Deno.test("the assembled system prompt is byte-stable and matches the golden file", async () => {
  const forward = await assembled(SECTIONS);
  const backward = await assembled([...SECTIONS].reverse());
  assert.deepStrictEqual(backward, forward);
  if (Deno.env.get("UPDATE_GOLDEN") === "1") await Deno.writeFile(GOLDEN, forward);
  assert.deepStrictEqual(forward, await Deno.readFile(GOLDEN));
});
