/**
 * Proves the kernel and core are importable on their own: each is copied, as a consumer would receive it, into a
 * temporary directory next to a script that imports only that package, which must type-check and run.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));

async function copyPackage(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory) await copyPackage(source, target);
    else if (entry.isFile && !entry.name.endsWith("_test.ts")) await Deno.copyFile(source, target);
  }
}

async function deno(
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

async function packageImports(member: string): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(join(root, member, "deno.json"))) as {
    imports?: Record<string, string>;
  };
  return config.imports ?? {};
}

Deno.test("the kernel type-checks and runs with nothing but its own package", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-standalone-kernel-" });
  try {
    await copyPackage(join(root, "kernel"), join(dir, "pkg", "hames"));
    await Deno.writeTextFile(
      join(dir, "deno.json"),
      JSON.stringify({
        imports: { "@terret/hames": "./pkg/hames/mod.ts", ...(await packageImports("kernel")) },
      }),
    );
    await Deno.writeTextFile(
      join(dir, "main.ts"),
      [
        'import { Context, createContext, defineService } from "@terret/hames";',
        'const Answer = defineService<number>("answer");',
        "const ctx: Context = createContext();",
        "ctx.provide(Answer, 42);",
        "console.log(`answer=${ctx.get(Answer)}`);",
        "await ctx.dispose();",
      ].join("\n"),
    );
    const checked = await deno(["check", "main.ts"], dir);
    assert.equal(checked.code, 0, checked.stderr);
    const ran = await deno(["run", "main.ts"], dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "answer=42\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Reads a member's `exports` map, as a consumer's import map would see it once the package is installed. */
async function packageExports(member: string): Promise<Record<string, string>> {
  const config = JSON.parse(await Deno.readTextFile(join(root, member, "deno.json"))) as {
    exports: Record<string, string>;
  };
  return config.exports;
}

Deno.test("core type-checks and runs through each of its entries with nothing but the kernel and its own package", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-standalone-core-" });
  try {
    await copyPackage(join(root, "kernel"), join(dir, "pkg", "hames"));
    await copyPackage(join(root, "core"), join(dir, "pkg", "core"));
    const entries = await packageExports("core");
    assert.deepStrictEqual(Object.keys(entries), [
      ".",
      "./sessions",
      "./tools",
      "./llm",
      "./mcp",
      "./compaction",
      "./agents",
      "./loop",
      "./prompt",
      "./redaction",
      "./approvals",
      "./seams",
      "./subagents",
      "./testing",
    ]);
    const imports: Record<string, string> = {
      "@terret/hames": "./pkg/hames/mod.ts",
      ...(await packageImports("kernel")),
      ...(await packageImports("core")),
    };
    for (const [entry, file] of Object.entries(entries)) {
      imports[`@terret/core${entry.slice(1)}`] = `./pkg/core/${file.slice(2)}`;
    }
    await Deno.writeTextFile(join(dir, "deno.json"), JSON.stringify({ imports }));
    await Deno.writeTextFile(
      join(dir, "main.ts"),
      [
        'import { createContext, Loader } from "@terret/hames";',
        'import { memoryStorePlugin, SessionsKey, sessionsPlugin } from "@terret/core";',
        'import { SessionLog } from "@terret/core/sessions";',
        'import { defineTool } from "@terret/core/tools";',
        'import { LlmRegistry } from "@terret/core/llm";',
        'import { mcpPlugin } from "@terret/core/mcp";',
        'import { AgentRegistry } from "@terret/core/agents";',
        'import { AgentLoop } from "@terret/core/loop";',
        'import { PromptAssembler } from "@terret/core/prompt";',
        'import { Redactor } from "@terret/core/redaction";',
        'import { SandboxKey } from "@terret/core/seams";',
        'import { SubagentsService } from "@terret/core/subagents";',
        'import { scriptedAdapter } from "@terret/core/testing";',
        "const ctx = createContext();",
        "await new Loader(ctx).load([",
        '  { id: "sessions.store", plugin: memoryStorePlugin, config: {} },',
        '  { id: "sessions", plugin: sessionsPlugin, config: {} },',
        "]);",
        'await ctx.get(SessionsKey).create({ session_id: "s1" });',
        'const tool = defineTool({ name: "noop", description: "Does nothing", parameters: { type: "object" }, handler: () => ({ content: "ok" }) });',
        "const used = [SessionLog, LlmRegistry, mcpPlugin, AgentRegistry, AgentLoop, PromptAssembler, Redactor, SandboxKey, SubagentsService, scriptedAdapter];",
        'console.log(`session=${(await ctx.get(SessionsKey).read("s1"))[0]?.type} tool=${tool.name} entries=${used.length}`);',
        "await ctx.dispose();",
      ].join("\n"),
    );
    const checked = await deno(["check", "main.ts"], dir);
    assert.equal(checked.code, 0, checked.stderr);
    const ran = await deno(["run", "main.ts"], dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "session=session/created tool=noop entries=10\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
