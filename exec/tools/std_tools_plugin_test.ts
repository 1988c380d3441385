import assert from "node:assert/strict";
import { z } from "zod";
import { definePlugin, Service, type ServiceKey } from "@terret/hames";
import { type Sandbox, SandboxKey, WorkspaceKey } from "@terret/core";
import type { ToolInfo } from "@terret/core/tools";
import { mountTools, textOf } from "./_testing.ts";
import { dockerSandboxPlugin } from "../sandbox/docker.ts";
import { createNoneSandbox } from "../sandbox/none.ts";
import { dockerLane } from "../../tests/docker/lane.ts";
import { stdToolsPlugin } from "./std_tools_plugin.ts";
import { jobsPlugin } from "../process/jobs_plugin.ts";
import { shellWord } from "../../tests/shell_words.ts";

const lane = await dockerLane();

/** A sandbox whose isolation is config and changes in place on reconfigure (no new service instance). */
class SwitchableSandbox extends Service<{ isolated: boolean }> implements Sandbox {
  static override readonly name = "sandbox-switchable";
  static readonly key: ServiceKey<Sandbox> = SandboxKey;
  static readonly inject = [WorkspaceKey];
  static readonly config = z.object({ isolated: z.boolean() });
  readonly name = "switchable";

  get isolated(): boolean {
    return this.config.isolated;
  }

  workspaceReady(): Promise<void> {
    return Promise.resolve();
  }

  wrap(argv: readonly string[], options: Parameters<Sandbox["wrap"]>[1]) {
    return createNoneSandbox(this.ctx.get(WorkspaceKey).dirs).wrap(argv, options);
  }

  override reconfigure(): void {}
}

/** A functional sandbox: reconfiguring it restarts it, which replaces the service. */
const replacingSandbox = definePlugin({
  name: "sandbox-replacing",
  inject: [WorkspaceKey],
  provides: [SandboxKey],
  config: z.object({ isolated: z.boolean() }),
  apply(ctx, config) {
    ctx.provide(SandboxKey, {
      ...createNoneSandbox(ctx.get(WorkspaceKey).dirs),
      isolated: config.isolated,
    });
  },
});

function summary(info: ToolInfo) {
  const parameters = info.parameters as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return {
    name: info.name,
    mutating: info.mutating,
    concurrency: info.concurrency,
    approval: info.approval,
    fields: Object.keys(parameters.properties ?? {}),
    required: parameters.required ?? [],
  };
}

Deno.test("the roster: Claude Code's names and fields, honest metadata, Bash 'always' outside a sandbox", async () => {
  await using w = await mountTools({
    rows: [{ id: "jobs", plugin: jobsPlugin, config: { report_lost: false } }],
  });
  assert.deepStrictEqual(w.tools.list().map(summary), [
    {
      name: "Bash",
      mutating: true,
      concurrency: "serial",
      approval: "always",
      fields: [
        "command",
        "timeout",
        "description",
        "run_in_background",
        "dangerouslyDisableSandbox",
      ],
      required: ["command"],
    },
    {
      name: "Edit",
      mutating: true,
      concurrency: "serial",
      approval: "policy",
      fields: ["file_path", "old_string", "new_string", "replace_all"],
      required: ["file_path", "old_string", "new_string"],
    },
    {
      name: "Glob",
      mutating: false,
      concurrency: "parallel",
      approval: "never",
      fields: ["pattern", "path"],
      required: ["pattern"],
    },
    {
      name: "Grep",
      mutating: false,
      concurrency: "parallel",
      approval: "never",
      fields: [
        "pattern",
        "path",
        "glob",
        "output_mode",
        "-B",
        "-A",
        "-C",
        "context",
        "-n",
        "-i",
        "-o",
        "type",
        "head_limit",
        "offset",
        "multiline",
      ],
      required: ["pattern"],
    },
    {
      name: "Read",
      mutating: false,
      concurrency: "parallel",
      approval: "never",
      fields: ["file_path", "offset", "limit", "pages", "allow_large"],
      required: ["file_path"],
    },
    {
      name: "TaskStop",
      mutating: true,
      concurrency: "serial",
      approval: "never",
      fields: ["task_id", "shell_id"],
      required: [],
    },
    {
      name: "TodoWrite",
      mutating: false,
      concurrency: "serial",
      approval: "never",
      fields: ["todos"],
      required: ["todos"],
    },
    {
      name: "WebFetch",
      mutating: true,
      concurrency: "parallel",
      approval: "policy",
      fields: ["url", "prompt", "offset"],
      required: ["url", "prompt"],
    },
    {
      name: "Write",
      mutating: true,
      concurrency: "serial",
      approval: "policy",
      fields: ["file_path", "content"],
      required: ["file_path", "content"],
    },
    {
      name: "terminal_close",
      mutating: true,
      concurrency: "serial",
      approval: "policy",
      fields: ["name"],
      required: ["name"],
    },
    {
      name: "terminal_input",
      mutating: true,
      concurrency: "serial",
      approval: "policy",
      fields: ["name", "text", "enter"],
      required: ["name", "text"],
    },
    {
      name: "terminal_open",
      mutating: true,
      concurrency: "serial",
      approval: "policy",
      fields: ["name", "command", "cwd", "cols", "rows"],
      required: ["name", "command"],
    },
    {
      name: "terminal_read",
      mutating: false,
      concurrency: "serial",
      approval: "never",
      fields: ["name", "wait_ms"],
      required: ["name"],
    },
  ]);
});

Deno.test("Bash's approval is re-derived when the sandbox row is reconfigured in place (config/updated)", async () => {
  await using w = await mountTools({
    sandbox: { plugin: SwitchableSandbox, config: { isolated: true } },
  });
  const sandbox = w.ctx.get(SandboxKey);
  assert.equal(w.tools.get("Bash")?.approval, "policy");
  await w.loader.reconfigure("sandbox", { isolated: false });
  assert.equal(w.ctx.get(SandboxKey), sandbox, "the same service instance, changed in place");
  assert.equal(w.tools.get("Bash")?.approval, "always");
  await w.loader.reconfigure("sandbox", { isolated: true });
  assert.equal(w.tools.get("Bash")?.approval, "policy");
  assert.equal(textOf(await w.call("Bash", { command: "echo still works" })), "still works");
});

Deno.test("Bash's approval is re-derived when the sandbox service is replaced, and absent while it is gone", async () => {
  await using w = await mountTools({
    sandbox: { plugin: replacingSandbox, config: { isolated: false } },
  });
  assert.equal(w.tools.get("Bash")?.approval, "always");
  await w.loader.reconfigure("sandbox", { isolated: true });
  assert.equal(w.tools.get("Bash")?.approval, "policy");
  // A live swap: the sandbox row goes away (Bash goes with it: no stale registration), another provider comes.
  await w.loader.fiber("sandbox")!.dispose();
  await w.ctx.idle();
  assert.equal(w.tools.get("Bash"), undefined);
  assert.equal(w.tools.get("Read")?.name, "Read");
  w.ctx.plugin(replacingSandbox, { isolated: false }, { id: "sandbox.next" });
  await w.ctx.idle();
  assert.equal(w.tools.get("Bash")?.approval, "always");
  assert.equal(textOf(await w.call("Bash", { command: "echo swapped" })), "swapped");
});

Deno.test("the tools.std row's permissions: net only with an allow list, rg with ripgrep auto", () => {
  const parse = (config: unknown) => stdToolsPlugin.config!.parse(config);
  assert.deepStrictEqual(stdToolsPlugin.permissions!(parse({}), { provider: () => undefined }), {
    run: ["rg"],
  });
  assert.deepStrictEqual(
    stdToolsPlugin.permissions!(
      parse({ web_fetch: { allow_domains: ["docs.deno.com"] }, grep: { ripgrep: "never" } }),
      {
        provider: () => undefined,
      },
    ),
    { net: true },
  );
  assert.throws(() => parse({ web_fetch: { allow_domains: ["http://x.com/"] } }), /allow_domains/);
});

Deno.test({
  name:
    "the roster is identical field for field under none and docker, except Bash's derived approval",
  ignore: lane.skip !== undefined,
  async fn() {
    await using host = await mountTools();
    await using docker = await mountTools({
      sandbox: { plugin: dockerSandboxPlugin, config: { image: lane.image, network: "none" } },
    });
    const strip = (info: ToolInfo) => ({ ...info, schema: undefined });
    const hostRoster = host.tools.list().map(strip);
    const dockerRoster = docker.tools.list().map(strip);
    assert.deepStrictEqual(
      dockerRoster.map((info) => info.name === "Bash" ? { ...info, approval: "always" } : info),
      hostRoster,
    );
    assert.deepStrictEqual(
      [host.tools.get("Bash")?.approval, docker.tools.get("Bash")?.approval],
      ["always", "policy"],
    );
    // The same tool code, moved: Write lands host-side in the mount, Bash reads it inside the container.
    await docker.call("Write", { file_path: `${docker.dir}/note.txt`, content: "from fs" });
    assert.equal(
      textOf(
        await docker.call("Bash", {
          command: `cat ${
            shellWord(`${docker.dir}/note.txt`)
          }; echo; cat /proc/sys/kernel/hostname`,
        }),
      ),
      "from fs\nterret-sandbox",
    );
    assert.equal(
      textOf(
        await docker.call("Grep", { pattern: "from", path: docker.dir, output_mode: "content" }),
      ),
      `${docker.dir}/note.txt:1:from fs`,
    );
  },
});
