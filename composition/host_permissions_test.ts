import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fixedEnv, FIXTURE_BUNDLES, writeTree } from "../tests/fixtures/composition/tree.ts";
import { permissionFlags, planPermissions } from "./host_permissions.ts";
import { prepareRows } from "./prepare.ts";
import { resolveProfile } from "./resolve.ts";

const PLUGINS_DIR = fileURLToPath(
  new URL("../tests/fixtures/composition/plugins", import.meta.url),
);
const BUNDLE = fileURLToPath(new URL("greetings.yml", FIXTURE_BUNDLES));

Deno.test("planPermissions() unions what each row declares with what trt needs, folding covered paths", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": "bundles: [greetings]\n",
    "patch.yml":
      "rows:\n  - id: greeter\n    config: { greeting: !env GREETING, port: 9000, data_dir: data }\n",
    "profiles/dev/patch.yml":
      "rows:\n  - { id: second, plugin: greeter, config: { greeting: b, data_dir: data/sub } }\n",
  });
  const resolved = await resolveProfile("dev", {
    home: tree.dir,
    cwd: tree.dir,
    env: fixedEnv({}),
    bundleDirs: [FIXTURE_BUNDLES],
  });
  const prepared = await prepareRows(resolved, { env: fixedEnv({ GREETING: "hi" }) });
  const plan = planPermissions(resolved, prepared);
  assert.deepStrictEqual(permissionFlags(plan), [
    `--allow-read=${
      [
        BUNDLE,
        PLUGINS_DIR,
        tree.path("data"),
        tree.path("patch.yml"),
        tree.path("profiles/dev"),
        // trt serve's home lock.
        tree.path("serve.lock"),
      ].sort().join(",")
    }`,
    `--allow-write=${[tree.path("data"), tree.path("serve.lock")].sort().join(",")}`,
    "--allow-net=127.0.0.1:8080,127.0.0.1:9000",
    "--allow-env=GREETING,SHOUT_LEVEL",
    "--ignore-env=LOG_STREAM,LOG_TOKENS",
  ]);
  assert.deepStrictEqual(plan.grants.read.by[tree.path("data")], ["greeter", "second"]);
  assert.deepStrictEqual(plan.grants.net.by, {
    "127.0.0.1:8080": ["second"],
    "127.0.0.1:9000": ["greeter"],
  });
  assert.deepStrictEqual(plan.grants.env.by, { GREETING: ["trt"], SHOUT_LEVEL: ["shouter"] });
});

Deno.test("permissionFlags() prints an unscoped grant as a bare flag", () => {
  const empty = { unscoped: false, unscopedBy: [], scopes: [], by: {} };
  const flags = permissionFlags({
    grants: {
      read: { unscoped: false, unscopedBy: [], scopes: ["/a"], by: { "/a": ["trt"] } },
      write: empty,
      net: empty,
      env: empty,
      run: { unscoped: true, unscopedBy: ["sandbox"], scopes: ["docker"], by: { docker: ["x"] } },
      ffi: empty,
      sys: empty,
    },
    ignoreEnv: ["LOG_STREAM"],
  });
  assert.deepStrictEqual(flags, ["--allow-read=/a", "--allow-run", "--ignore-env=LOG_STREAM"]);
});

Deno.test("planPermissions() expands ~ and grants a path reached through a link at its real location too", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": "bundles: [greetings]\n",
    "profiles/dev/patch.yml":
      "rows:\n  - id: greeter\n    config: { greeting: hi, data_dir: ~/data-link/sub }\n",
    "data-real/sub/.keep": "",
  });
  await Deno.symlink(tree.path("data-real"), tree.path("data-link"));
  const resolved = await resolveProfile("dev", {
    home: tree.dir,
    cwd: "/",
    env: fixedEnv({}),
    bundleDirs: [FIXTURE_BUNDLES],
  });
  const prepared = await prepareRows(resolved, { env: fixedEnv({}) });
  const plan = planPermissions(resolved, prepared, { env: fixedEnv({ HOME: tree.dir }) });
  assert.deepStrictEqual(plan.grants.write, {
    unscoped: false,
    unscopedBy: [],
    scopes: [tree.path("data-link/sub"), tree.path("data-real/sub"), tree.path("serve.lock")],
    by: {
      [tree.path("data-link/sub")]: ["greeter"],
      [tree.path("data-real/sub")]: ["greeter"],
      [tree.path("serve.lock")]: ["trt"],
    },
  });
});
