/**
 * The JSR path, proven against a local registry: every workspace member is published with a real `deno publish`
 * into a static registry laid out as JSR serves it (tools/local_jsr.ts), then run from an empty directory with an
 * empty `DENO_DIR`: `jsr:@terret/cli serve` serves a turn over the socket against the fake model, scripts that
 * import only `jsr:@terret/hames` and only `jsr:@terret/core` run, and `jsr:@terret/terret` boots from code. A copy
 * of core published without one of its files fails, which proves the registry holds the publish set and nothing
 * more. This catches what works from a checkout but not from a package: files read through `import.meta.url`, files
 * missing from the publish set, paths outside a member and unversioned npm specifiers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fakeOpenRouter, sseResponse, textTurn } from "@terret/core/testing";
import {
  type LocalJsr,
  probeRegistry,
  publishWorkspace,
  startLocalJsr,
  WORKSPACE_ROOT,
} from "../tools/local_jsr.ts";
import { within, WsClient } from "./ws/_clients.ts";
import { stablePort } from "./ports.ts";

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A sandbox for a consumer: an empty working directory, an empty DENO_DIR and a Terret home. */
interface Consumer extends AsyncDisposable {
  readonly dir: string;
  readonly home: string;
  env(registry: string): Record<string, string>;
}

async function consumer(): Promise<Consumer> {
  const root = await Deno.makeTempDir({ prefix: "terret-jsr-consumer-" });
  const dir = join(root, "work");
  const home = join(root, "home");
  await Deno.mkdir(dir);
  await Deno.mkdir(home);
  return {
    dir,
    home,
    env: (registry) => {
      const env = Deno.env.toObject();
      for (const name of Object.keys(env)) {
        if (/^(OTEL_|TERRET_)|^(DENO_DIR|OPENROUTER_API_KEY)$/.test(name)) delete env[name];
      }
      return {
        ...env,
        JSR_URL: registry,
        DENO_DIR: join(root, "deno_dir"),
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
        TERRET_HOME: home,
      };
    },
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

async function run(args: string[], where: Consumer, registry: string): Promise<Ran> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: where.dir,
    env: where.env(registry),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Writes `lines` as a script in the consumer's directory and runs it with `deno run -A`. */
async function script(where: Consumer, registry: string, lines: string[]): Promise<Ran> {
  await Deno.writeTextFile(join(where.dir, "main.ts"), lines.join("\n") + "\n");
  return await run(["run", "-A", "main.ts"], where, registry);
}

const CORE_SCRIPT = [
  'import { SessionsKey } from "jsr:@terret/core";',
  'import { readCassette } from "jsr:@terret/core/llm";',
  'import { CASSETTES, createAgentStack, scriptedAdapter, textReply } from "jsr:@terret/core/testing";',
  "const cassette = await readCassette(CASSETTES.toolTurn);",
  'await using stack = await createAgentStack({ adapter: scriptedAdapter([textReply("Hi")]) });',
  'const agent = await stack.agents.ensure("a1");',
  'agent.send("Hello");',
  "await agent.idle();",
  'const types = (await stack.ctx.get(SessionsKey).read("a1")).map((event) => event.type);',
  'console.log(`${types.join(" ")} | cassette requests: ${cassette.interactions.length}`);',
];

Deno.test("the workspace published to a local JSR registry runs from an empty directory with an empty DENO_DIR", async (t) => {
  await using registry = await startLocalJsr();
  await publishWorkspace(registry);
  assert.deepStrictEqual(await publishedPackages(registry), [
    "acp",
    "cli",
    "core",
    "exec",
    "hames",
    "terret",
    "ws",
  ]);
  await probeRegistry(registry.url, "@terret/cli");
  await using where = await consumer();

  await t.step(
    "jsr:@terret/cli serve boots the headless profile and serves a turn over the socket",
    async () => {
      await using model = await fakeOpenRouter();
      model.script(sseResponse(textTurn(["Hello from ", "the registry"])));
      const patch = join(where.home, "serve.yml");
      await Deno.writeTextFile(
        patch,
        [
          "rows:",
          "  - id: llm.main",
          `    config: { model: test/model, base_url: "${model.url}", api_key: sk-test, max_retries: 0 }`,
          "  - id: sandbox",
          "    config: { image: terret/sandbox:test, docker: /nonexistent/docker }",
          "  - id: titles",
          "    config: { auto: false }",
          "  - id: interfaces.ws",
          "    config: { port: 0, token_env: TERRET_TOKEN }",
          "",
        ].join("\n"),
      );
      const token = "a-socket-token-for-the-registry-test";
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "jsr:@terret/cli", "serve", "--patch", patch],
        cwd: where.dir,
        env: { ...where.env(registry.url), TERRET_TOKEN: token },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const stderr = new Response(child.stderr).text();
      const reader = child.stdout.getReader();
      const decoder = new TextDecoder();
      let out = "";
      try {
        await within(
          (async () => {
            while (!out.includes("running until SIGINT or SIGTERM\n")) {
              const { value, done } = await reader.read();
              if (done) throw new Error(`serve exited before it was ready: ${out}${await stderr}`);
              out += decoder.decode(value, { stream: true });
            }
          })(),
          150_000,
          "jsr:@terret/cli serve to come up",
        );
        assert.match(
          out,
          /^trt serve: booted profile "headless" \(shipped template\): 26 of 26 rows/,
        );
        const port = /ws:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1];
        assert.ok(port !== undefined, out);
        const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/a1/stream`, { token });
        try {
          assert.deepStrictEqual(await client.next(), {
            type: "hello",
            protocol: 1,
            agent_id: "a1",
            session_id: "a1",
            head_seq: 0,
          });
          client.send({ type: "subscribe", from_seq: 1 });
          client.send({ type: "message", content: "Say hello", ref: "m1" });
          const frames = await client.readUntil(
            (frame) => (frame.event as { type?: string } | undefined)?.type === "turn/end",
            60_000,
          );
          const events = frames.filter((frame) => frame.type === "event").map((frame) =>
            frame.event as { type: string; payload: Record<string, unknown> }
          );
          // How many chunks the text arrives in depends on how TCP splits it; the rest is exact.
          const chunks = events.filter((event) => event.type === "assistant/chunk");
          assert.equal(
            chunks.map((event) => event.payload.text).join(""),
            "Hello from the registry",
          );
          assert.deepStrictEqual(
            events.filter((event) => event.type !== "assistant/chunk").map((event) => event.type),
            [
              "session/created",
              "input/queued",
              "turn/start",
              "step/start",
              "user/message",
              "assistant/message",
              "step/end",
              "turn/end",
            ],
          );
          const message = events.find((event) => event.type === "assistant/message");
          assert.deepStrictEqual(message?.payload.parts, [
            { type: "text", text: "Hello from the registry" },
          ]);
          assert.equal(model.requests.length, 1);
        } finally {
          await client.close();
        }
      } finally {
        child.kill("SIGTERM");
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          out += decoder.decode(value, { stream: true });
        }
      }
      assert.equal((await child.status).code, 0, await stderr);
      assert.ok(out.endsWith("trt serve: stopped\n"), out);
    },
  );

  await t.step("a script importing only jsr:@terret/hames runs", async () => {
    const ran = await script(where, registry.url, [
      'import { type Context, createContext, defineService } from "jsr:@terret/hames";',
      'const Answer = defineService<number>("answer", "The answer");',
      "const ctx: Context = createContext();",
      "ctx.provide(Answer, 42);",
      "console.log(`answer=${ctx.get(Answer)}`);",
      "await ctx.dispose();",
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "answer=42\n");
  });

  await t.step(
    "a script importing only jsr:@terret/core runs a turn and reads a shipped cassette",
    async () => {
      const ran = await script(where, registry.url, CORE_SCRIPT);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(
        ran.stdout,
        "session/created turn/start step/start user/message assistant/chunk assistant/message step/end turn/end" +
          " | cassette requests: 2\n",
      );
    },
  );

  await t.step("jsr:@terret/terret boots the headless profile from code", async () => {
    const ran = await script(where, registry.url, [
      'import { Terret } from "jsr:@terret/terret";',
      `const home = ${JSON.stringify(where.home)};`,
      'await Deno.writeTextFile(`${home}/code.yml`, "rows:\\n  - id: interfaces.ws\\n    disabled: true\\n");',
      'await using terret = await Terret.boot("headless", { home, patches: [`${home}/code.yml`] });',
      'console.log(terret.rows.map((row) => row.composed.id).join(" "));',
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(
      ran.stdout,
      "workspace credentials redaction telemetry sessions.store sessions llm llm.main fs sandbox subprocess shell " +
        "terminals jobs tools tools.std tools.allow prompt agents loop subagents subagents.acp compaction titles approvals\n",
    );
  });

  await t.step("a copy of core published without one of its files fails", async () => {
    const copy = await Deno.makeTempDir({ prefix: "terret-jsr-broken-" });
    try {
      await copyWorkspace(copy);
      const config = JSON.parse(await Deno.readTextFile(join(copy, "core", "deno.json")));
      config.publish = { exclude: ["**/*_test.ts", "llm/testdata/tool_turn.jsonl"] };
      await Deno.writeTextFile(join(copy, "core", "deno.json"), JSON.stringify(config));
      await using broken = await startLocalJsr();
      await broken.publish(join(copy, "kernel"));
      await broken.publish(join(copy, "core"));
      const ran = await script(where, broken.url, CORE_SCRIPT);
      assert.equal(ran.code, 1);
      assert.equal(ran.stdout, "");
      assert.match(
        ran.stderr,
        new RegExp(
          `error: Uncaught \\(in promise\\) TerretError: Cannot read cassette "${
            broken.url.replaceAll(".", "\\.")
          }@terret/core/0\\.1\\.0/llm/testdata/tool_turn\\.jsonl": the server answered HTTP 404\\n`,
        ),
      );
    } finally {
      await Deno.remove(copy, { recursive: true });
    }
  });
});

Deno.test("probeRegistry() names an unreachable JSR_URL and what to do", async () => {
  // A free port below the ephemeral range: nothing listens there, and no parallel test's listener is handed it.
  const url = `http://127.0.0.1:${stablePort()}/`;
  await assert.rejects(probeRegistry(url, "@terret/cli"), (error: Error) => {
    assert.match(
      error.message,
      new RegExp(
        `^Cannot reach the JSR registry at "${
          url.replaceAll(".", "\\.")
        }" \\(JSR_URL\\): fetching "@terret/cli/meta\\.json" failed: .+; start it \\(deno run -A tools/local_jsr\\.ts\\) or unset JSR_URL to use https://jsr\\.io/$`,
      ),
    );
    return true;
  });
});

async function publishedPackages(registry: LocalJsr): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(join(registry.dir, "@terret"))) names.push(entry.name);
  return names.sort();
}

/** Copies the tracked files of the workspace (what a clean clone holds) to `to`. */
async function copyWorkspace(to: string): Promise<void> {
  const listed = await new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: WORKSPACE_ROOT,
    stdout: "piped",
  }).output();
  const files = new TextDecoder().decode(listed.stdout).split("\0").filter((file) =>
    file !== "" && !file.startsWith("tests/") && !file.startsWith("bench/")
  );
  for (const file of files) {
    const target = join(to, file);
    await Deno.mkdir(join(target, ".."), { recursive: true });
    await Deno.copyFile(join(WORKSPACE_ROOT, file), target).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  }
}
