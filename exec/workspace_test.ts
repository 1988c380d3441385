import assert from "node:assert/strict";
import { definePlugin, NO_PERMISSION_DEPS, parseConfig, pluginPermissions } from "@terret/hames";
import { WorkspaceKey } from "@terret/core";
import { grantedDirs, workspacePlugin } from "./workspace.ts";

Deno.test("the workspace row asks to read its directories, and HOME only when one starts with ~", () => {
  const grant = (dirs: string[]) =>
    pluginPermissions(workspacePlugin, parseConfig(workspacePlugin, { dirs }, "workspace"));
  assert.deepStrictEqual(grant(["/srv/a", "rel/b"]), { read: ["/srv/a", "rel/b"] });
  assert.deepStrictEqual(grant(["~/work", "/srv/a"]), {
    read: ["~/work", "/srv/a"],
    env: ["HOME"],
  });
  assert.deepStrictEqual(grant([]), { read: [] });
});

Deno.test("grantedDirs() reads the workspace row a hook depends on, and says when it cannot", () => {
  const rows = (plugin: string, config: unknown) => ({
    provider: (key: unknown) => key === WorkspaceKey ? { plugin, config } : undefined,
  });
  assert.deepStrictEqual(grantedDirs(rows("workspace", { dirs: ["/srv/a"] })), ["/srv/a"]);
  assert.deepStrictEqual(grantedDirs(NO_PERMISSION_DEPS), []);
  assert.equal(grantedDirs(rows("my-workspace", { roots: ["/x"] })), true);
  // Through pluginPermissions, a hook sees the workspace row only when its plugin injects the workspace.
  const blind = definePlugin({
    name: "blind",
    permissions: (_config, deps) => ({ env: [`DIRS_${JSON.stringify(grantedDirs(deps))}`] }),
    apply() {},
  });
  assert.deepStrictEqual(
    pluginPermissions(blind, {}, rows("workspace", { dirs: ["/srv/a"] })),
    { env: ["DIRS_[]"] },
  );
});
