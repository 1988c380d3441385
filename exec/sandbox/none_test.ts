import assert from "node:assert/strict";
import { createContext, Loader, parseConfig, pluginPermissions } from "@terret/hames";
import { SandboxKey, WorkspaceKey } from "@terret/core";
import { runSandboxConformance } from "../../tests/conformance/sandbox_provider.ts";
import {
  EXPECTED_ESCAPES,
  hostLimits,
  testEscapeBattery,
} from "../../tests/conformance/escape_battery.ts";
import { workspacePlugin } from "../workspace.ts";
import { createNoneSandbox, noneSandboxPlugin } from "./none.ts";

runSandboxConformance({
  name: "none",
  language: "shell",
  create: (dirs) => ({ sandbox: createNoneSandbox(dirs), dispose: () => Promise.resolve() }),
  runningProcesses: 3,
  // Not isolated: everything a host process can do succeeds. It still refuses a cwd outside the workspace.
  expected: {
    read_passwd: "escaped",
    read_outside: "escaped",
    write_outside: "escaped",
    network: "escaped",
    symlink_out: "escaped",
    dotdot: "escaped",
    dangling_write: "escaped",
    sibling_prefix: "escaped",
    symlink_loop: "contained",
    cwd_outside: "refused",
    empty_workspace: "refused",
  },
});

Deno.test("the none row needs acknowledge_unsandboxed and wraps argv unchanged", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-none-" }));
  try {
    await using ctx = createContext({ mode: "test" });
    const loader = new Loader(ctx);
    await assert.rejects(
      loader.load([
        { id: "workspace", plugin: workspacePlugin, config: { dirs: [root] } },
        { id: "sandbox", plugin: noneSandboxPlugin, config: {} },
      ]),
      { code: "ConfigInvalid" },
    );
    await using ctx2 = createContext({ mode: "test" });
    await new Loader(ctx2).load([
      { id: "workspace", plugin: workspacePlugin, config: { dirs: [root] } },
      { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
    ]);
    const sandbox = ctx2.get(SandboxKey);
    assert.deepStrictEqual([sandbox.name, sandbox.isolated], ["none", false]);
    assert.deepStrictEqual(
      await sandbox.wrap(["bash", "-c", "echo hi"], { cwd: root, tty: true, env: { A: "1" } }),
      { argv: ["bash", "-c", "echo hi"], cwd: root, env: { A: "1" } },
    );
    await assert.rejects(sandbox.wrap(["x"], { cwd: root, env: { "A=B": "1" } }), TypeError);
    await assert.rejects(sandbox.wrap(["x\0"], { cwd: root }), TypeError);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("the sandbox-none row asks to read the workspace only (the programs are the subprocess row's grant)", () => {
  const config = parseConfig(noneSandboxPlugin, { acknowledge_unsandboxed: true }, "sandbox");
  assert.deepStrictEqual(
    pluginPermissions(noneSandboxPlugin, config, {
      provider: (key) =>
        key === WorkspaceKey ? { plugin: "workspace", config: { dirs: ["/srv/ws"] } } : undefined,
    }),
    { read: ["/srv/ws"] },
  );
});

testEscapeBattery({
  name: "none",
  language: "shell",
  sandbox: { plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
  expected: EXPECTED_ESCAPES.none,
  hostLimits,
});
