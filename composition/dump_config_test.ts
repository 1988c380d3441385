import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { fixedEnv, FIXTURE_BUNDLES, writeTree } from "../tests/fixtures/composition/tree.ts";
import { dumpConfig } from "./dump_config.ts";
import { resolveProfile } from "./resolve.ts";

Deno.test("dumpConfig() annotates each row with the layers that set it and shows tags, never secrets", async () => {
  await using tree = await writeTree({
    "profiles/dev/profile.yml": "bundles: [greetings]\nsettings:\n  shout: { suffix: '!!' }\n",
    "profiles/dev/patch.yml":
      "rows:\n  - id: greeter\n    config: { greeting: !env SECRET_GREETING, port: 9000 }\n",
    "patch.yml": "rows:\n  - id: shouter\n    disabled: true\n",
    "extra.yml":
      "settings:\n  shout: { suffix: !env SUFFIX }\nrows:\n  - { id: echo, plugin: greeter, before: shouter, config: { greeting: !setting shout.suffix } }\n",
  });
  const env = fixedEnv({ SECRET_GREETING: "s3cr3t-value", SUFFIX: "also-secret" });
  const resolved = await resolveProfile("dev", {
    home: tree.dir,
    cwd: tree.dir,
    env,
    bundleDirs: [FIXTURE_BUNDLES],
    patches: ["extra.yml"],
  });
  const text = dumpConfig(resolved);
  const bundle = fileURLToPath(new URL("greetings.yml", FIXTURE_BUNDLES));
  const profilePatch = tree.path("profiles/dev/patch.yml");
  assert.equal(
    text,
    `# trt dump-config: profile "dev" (${tree.path("profiles/dev/profile.yml")})
# layers, in order:
#   1. bundle greetings: ${bundle}
#   2. profile patch: ${profilePatch}
#   3. home patch: ${tree.path("patch.yml")}
#   4. --patch: ${tree.path("extra.yml")}
# tags are shown as written; they are resolved only at boot

settings:
  # shout: set by --patch (${tree.path("extra.yml")}:2)
  shout:
    suffix: !env SUFFIX
rows:
  # greeter: set by bundle greetings (${bundle}:7); config by profile patch (${profilePatch}:2)
  - id: greeter
    plugin: greeter
    config:
      greeting: !env SECRET_GREETING
      port: 9000
  # echo: set by --patch (${tree.path("extra.yml")}:4)
  - id: echo
    plugin: greeter
    config:
      greeting: !setting shout.suffix
  # shouter: set by bundle greetings (${bundle}:11); disabled by home patch (${
      tree.path("patch.yml")
    }:2)
  - id: shouter
    plugin: shouter
    disabled: true
    config: {}
`,
  );
  assert.equal(text.includes("s3cr3t"), false);
  assert.equal(text.includes("also-secret"), false);
  assert.deepStrictEqual(env.reads, []);
});
