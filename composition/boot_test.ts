import assert from "node:assert/strict";
import { LoaderKey } from "@terret/hames";
import { fixedEnv, FIXTURE_BUNDLES, writeTree } from "../tests/fixtures/composition/tree.ts";
import { Shouter } from "../tests/fixtures/composition/plugins/greeter.ts";
import { bootProfile } from "./boot.ts";
import { dumpConfig } from "./dump_config.ts";
import { resolveProfile } from "./resolve.ts";
import { COMPOSITION_ERRORS, type CompositionErrorCode } from "./errors.ts";

const PROFILE = `
bundles: [greetings]
settings:
  shout: { suffix: "?" }
`;

function options(home: string, env: Record<string, string> = {}) {
  return {
    home,
    cwd: home,
    env: fixedEnv(env),
    bundleDirs: [FIXTURE_BUNDLES],
    context: { mode: "test" as const },
  };
}

async function rejectsWith(
  promise: Promise<unknown>,
  code: CompositionErrorCode,
  message: string,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(COMPOSITION_ERRORS.is(error, code), `expected ${code}, got ${error}`);
    assert.equal(error.message, message);
    return true;
  });
}

Deno.test("bootProfile() composes the layers, validates every row and mounts them through the loader", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": PROFILE,
    "profiles/dev/patch.yml":
      "rows:\n  - id: shouter\n    config: { suffix: !setting shout.suffix }\n",
    "patch.yml": "rows:\n  - id: greeter\n    config: { greeting: !env GREETING }\n",
  });
  const env = { GREETING: "hi" };
  await using terret = await bootProfile("dev", options(tree.dir, env));
  assert.equal(terret.ctx.get(Shouter).shout("ann"), "HI ANN?");
  assert.equal(terret.ctx.get(LoaderKey), terret.loader);
  assert.deepStrictEqual(terret.loader.rows().map((row) => [row.id, row.config]), [
    ["greeter", { greeting: "hi" }],
    ["shouter", { suffix: "?" }],
  ]);
  assert.deepStrictEqual(terret.resolved.layers.map((layer) => layer.name), [
    "bundle greetings",
    "profile patch",
    "home patch",
  ]);
});

Deno.test("tags are materialised at boot only: resolving and dumping read no variable", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": PROFILE,
    "patch.yml": "rows:\n  - id: greeter\n    config: { greeting: !env GREETING }\n",
  });
  const opts = options(tree.dir, { GREETING: "hey" });
  const resolved = await resolveProfile("dev", opts);
  dumpConfig(resolved);
  assert.deepStrictEqual(opts.env.reads, []);
  await using terret = await bootProfile("dev", opts);
  assert.deepStrictEqual(opts.env.reads, ["GREETING"]);
  assert.equal(terret.ctx.get(Shouter).shout("bo"), "HEY BO!");
});

Deno.test("a wrong type names the file, line, row, key and the layer that set the config", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": PROFILE,
    "patch.yml": "rows:\n  - id: greeter\n    config:\n      greeting: hello\n      port: eighty\n",
  });
  await rejectsWith(
    bootProfile("dev", options(tree.dir)),
    "ConfigInvalid",
    `Cannot configure row "greeter" (config set by home patch "${
      tree.path("patch.yml")
    }" line 5): config.port: expected number, received string`,
  );
});

Deno.test("a missing required key and an unknown key are named with their row and layer", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": PROFILE,
    "profiles/dev/patch.yml": "rows:\n  - id: greeter\n    config: { greting: hello }\n",
  });
  await rejectsWith(
    bootProfile("dev", options(tree.dir)),
    "ConfigInvalid",
    `Cannot configure row "greeter" (config set by profile patch "${
      tree.path("profiles/dev/patch.yml")
    }" line 3): config.greeting: expected string, received undefined; config: Unrecognized key: "greting"`,
  );
});

Deno.test("an unresolvable tag names the row, the key and where it was set", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": PROFILE,
    "patch.yml":
      "rows:\n  - id: greeter\n    config: { greeting: !env NOPE }\n  - id: shouter\n    config: { suffix: !setting shout.volume }\n",
  });
  await rejectsWith(
    bootProfile("dev", options(tree.dir)),
    "TagUnresolved",
    `Cannot resolve "!env NOPE" at row "greeter" key "config.greeting" (home patch "${
      tree.path("patch.yml")
    }" line 2): the variable is not set`,
  );
  await rejectsWith(
    bootProfile("dev", options(tree.dir, { NOPE: "x" })),
    "TagUnresolved",
    `Cannot resolve "!setting shout.volume" at row "shouter" key "config.suffix" (home patch "${
      tree.path("patch.yml")
    }" line 4): no such setting`,
  );
});

Deno.test("a path-shaped profile plugin is refused without consent and never imported; consent boots it", async () => {
  const marker = `marker-${crypto.randomUUID()}`;
  await using tree = await writeTree({
    "profiles/dev/profile.yml": `${PROFILE}plugins:\n  ${marker}: ./marker.ts\n`,
    "profiles/dev/marker.ts": `
      const g = globalThis as { __terretMarkerImports?: Record<string, number> };
      g.__terretMarkerImports ??= {};
      g.__terretMarkerImports["${marker}"] = (g.__terretMarkerImports["${marker}"] ?? 0) + 1;
      export default { name: "${marker}", apply() {} };
    `,
    "profiles/dev/patch.yml": `rows:\n  - { id: marker, plugin: ${marker}, after: greeter }\n`,
  });
  const imports = () =>
    (globalThis as { __terretMarkerImports?: Record<string, number> }).__terretMarkerImports
      ?.[marker] ?? 0;
  await rejectsWith(
    bootProfile("dev", options(tree.dir)),
    "ConfigCodeRefused",
    `Cannot load plugin "${marker}" from "./marker.ts" (declared by profile ${
      tree.path("profiles/dev/profile.yml")
    } line 6): a profile plugins: entry that is a file path or URL, which runs code named by config; pass --allow-config-code to allow it`,
  );
  assert.equal(imports(), 0);
  await using terret = await bootProfile("dev", { ...options(tree.dir), allowConfigCode: true });
  assert.equal(imports(), 1);
  assert.deepStrictEqual(terret.loader.rows().map((row) => row.id), [
    "greeter",
    "marker",
    "shouter",
  ]);
});

Deno.test("an unknown plugin and a patch to an unknown row are boot errors naming the file", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": PROFILE,
    "patch.yml": "rows:\n  - { id: extra, plugin: nowhere }\n",
    "typo.yml": "rows:\n  - id: greter\n    config: { greeting: x }\n",
  });
  await rejectsWith(
    bootProfile("dev", options(tree.dir)),
    "PluginUnknown",
    `Cannot configure row "extra" (plugin set by home patch "${
      tree.path("patch.yml")
    }" line 2): unknown plugin "nowhere" (no built-in, bundle or profile declares it; known: fs, greeter, jobs, sandbox-bwrap, sandbox-deno, sandbox-docker, sandbox-none, shell, shouter, subprocess, terminals, terret-acp, terret-agents, terret-approvals, terret-compaction, terret-credentials, terret-llm, terret-llm-openrouter, terret-llm-recorder, terret-llm-replayer, terret-loop, terret-mcp, terret-prompt, terret-redaction, terret-sessions, terret-store-jsonl, terret-store-memory, terret-store-postgres, terret-store-sqlite, terret-subagents, terret-subagents-acp, terret-telemetry, terret-titler, terret-tools, terret-tools-allow, terret-tools-std, terret-ws, workspace)`,
  );
  await rejectsWith(
    bootProfile("dev", { ...options(tree.dir), patches: ["typo.yml"] }),
    "PatchTargetMissing",
    `Cannot apply row "greter" from --patch "${
      tree.path("typo.yml")
    }" line 2: no earlier layer has a row with this id (known: greeter, shouter, extra); to insert a new row, give it a plugin`,
  );
});
