import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { fixedEnv, FIXTURE_BUNDLES, writeTree } from "../tests/fixtures/composition/tree.ts";
import { COMPOSITION_CHECKS, type DoctorCheck, runDoctor } from "./doctor.ts";
import { resolveProfile } from "./resolve.ts";

const BASE = fileURLToPath(new URL("../bundles/base.yml", import.meta.url));
/** The core's built-in plugin names, as an unknown-plugin error lists them (sorted among the others). */
const CORE_PLUGINS =
  "terret-acp, terret-agents, terret-approvals, terret-compaction, terret-credentials, terret-llm, " +
  "terret-llm-openrouter, " +
  "terret-llm-recorder, terret-llm-replayer, terret-loop, terret-mcp, terret-prompt, terret-redaction, terret-sessions, " +
  "terret-store-jsonl, terret-store-memory, terret-store-postgres, terret-store-sqlite, terret-subagents, terret-subagents-acp, " +
  "terret-telemetry, terret-titler, terret-tools, terret-tools-allow, terret-tools-std, terret-ws";

Deno.test("runDoctor() reports every row's problem without booting or importing unconsented code", async () => {
  const marker = `doctor-${crypto.randomUUID()}`;
  await using tree = await writeTree({
    "profiles/dev/profile.yml": `bundles: [greetings, base]\nplugins:\n  ${marker}: ./code.ts\n`,
    "profiles/dev/code.ts":
      `(globalThis as Record<string, unknown>)["${marker}"] = true;\nexport default { name: "${marker}", apply() {} };\n`,
    "patch.yml": `rows:
  - id: greeter
    config: { greeting: 5 }
  - id: shouter
    config: { suffix: !env MISSING_SUFFIX }
  - { id: code, plugin: ${marker} }
  - { id: ghost, plugin: nowhere }
  - { id: off, plugin: nowhere, disabled: true }
  - { id: off.bad, plugin: greeter, disabled: true, config: { greeting: 1 } }
`,
  });
  const resolved = await resolveProfile("dev", {
    home: tree.dir,
    cwd: tree.dir,
    env: fixedEnv({}),
    bundleDirs: [FIXTURE_BUNDLES],
  });
  const findings = await runDoctor(
    { resolved, env: fixedEnv({}), allowConfigCode: false },
    COMPOSITION_CHECKS,
  );
  const patch = tree.path("patch.yml");
  assert.deepStrictEqual(findings.map((f) => [f.level, f.check, f.row ?? "", f.message]), [
    [
      "error",
      "rows",
      "greeter",
      `Cannot configure row "greeter" (config set by home patch "${patch}" line 3): config.greeting: expected string, received number`,
    ],
    [
      "error",
      "rows",
      "shouter",
      `Cannot resolve "!env MISSING_SUFFIX" at row "shouter" key "config.suffix" (home patch "${patch}" line 4): the variable is not set`,
    ],
    ["ok", "rows", "workspace", "config valid (workspace)"],
    ["ok", "rows", "credentials", "config valid (terret-credentials)"],
    ["ok", "rows", "redaction", "config valid (terret-redaction)"],
    ["ok", "rows", "telemetry", "config valid (terret-telemetry)"],
    [
      "error",
      "rows",
      "sessions.store",
      `Cannot resolve "!setting sessions.path" at row "sessions.store" key "config.path" (bundle base "${BASE}" line 37): no such setting`,
    ],
    ["ok", "rows", "sessions", "config valid (terret-sessions)"],
    ["ok", "rows", "llm", "config valid (terret-llm)"],
    [
      "error",
      "rows",
      "llm.main",
      `Cannot resolve "!setting llm.model" at row "llm.main" key "config.model" (bundle base "${BASE}" line 51): no such setting`,
    ],
    ["ok", "rows", "fs", "config valid (fs)"],
    [
      "error",
      "rows",
      "sandbox",
      `Cannot resolve "!setting sandbox.image" at row "sandbox" key "config.image" (bundle base "${BASE}" line 63): no such setting`,
    ],
    ["ok", "rows", "subprocess", "config valid (subprocess)"],
    ["ok", "rows", "shell", "config valid (shell)"],
    ["ok", "rows", "terminals", "config valid (terminals)"],
    ["ok", "rows", "jobs", "config valid (jobs)"],
    ["ok", "rows", "tools", "config valid (terret-tools)"],
    ["ok", "rows", "tools.std", "config valid (terret-tools-std)"],
    ["ok", "rows", "tools.allow", "config valid (terret-tools-allow)"],
    ["ok", "rows", "prompt", "config valid (terret-prompt)"],
    ["ok", "rows", "agents", "config valid (terret-agents)"],
    ["ok", "rows", "loop", "config valid (terret-loop)"],
    ["ok", "rows", "subagents", "config valid (terret-subagents)"],
    ["ok", "rows", "subagents.acp", "config valid (terret-subagents-acp)"],
    ["ok", "rows", "compaction", "config valid (terret-compaction)"],
    ["ok", "rows", "titles", "config valid (terret-titler)"],
    ["ok", "rows", "approvals", "config valid (terret-approvals)"],
    ["ok", "rows", "interfaces.ws", "config valid (terret-ws)"],
    [
      "error",
      "rows",
      "code",
      `Cannot load plugin "${marker}" from "./code.ts" (declared by profile ${
        tree.path("profiles/dev/profile.yml")
      } line 3): a profile plugins: entry that is a file path or URL, which runs code named by config; pass --allow-config-code to allow it`,
    ],
    [
      "error",
      "rows",
      "ghost",
      `Cannot configure row "ghost" (plugin set by home patch "${patch}" line 7): unknown plugin "nowhere" (no built-in, bundle or profile declares it; known: ${marker}, fs, greeter, jobs, sandbox-bwrap, sandbox-deno, sandbox-docker, sandbox-none, shell, shouter, subprocess, terminals, ${CORE_PLUGINS}, workspace)`,
    ],
    ["info", "rows", "off", 'disabled; its plugin "nowhere" is not available in this build'],
    [
      "warning",
      "rows",
      "off.bad",
      `disabled; would fail: Cannot configure row "off.bad" (config set by home patch "${patch}" line 9): config.greeting: expected string, received number`,
    ],
    ...["read", "write", "run"].map((kind) => [
      "warning",
      "permissions",
      "",
      `unscoped --allow-${kind} requested by "subprocess", "shell", "terminals"; --scoped cannot narrow it`,
    ]),
  ]);
  assert.equal((globalThis as Record<string, unknown>)[marker], undefined);
});

Deno.test("runDoctor() runs added checks in order and turns a throwing check into an error finding", async () => {
  await using tree = await writeTree({ "profiles/dev/profile.yml": "bundles: [greetings]\n" });
  const resolved = await resolveProfile("dev", {
    home: tree.dir,
    cwd: tree.dir,
    env: fixedEnv({}),
    bundleDirs: [FIXTURE_BUNDLES],
  });
  const sandbox: DoctorCheck = {
    name: "sandbox",
    description: "which sandbox providers work here",
    atServe: true,
    run: (input) =>
      Promise.resolve([{
        level: "warning",
        check: "sandbox",
        message: `no isolating provider for ${input.prepared.length} rows`,
      }]),
  };
  const broken: DoctorCheck = {
    name: "broken",
    description: "throws",
    run: () => Promise.reject(new Error("probe crashed")),
  };
  const findings = await runDoctor(
    { resolved, env: fixedEnv({}), allowConfigCode: false },
    [...COMPOSITION_CHECKS, sandbox, broken],
  );
  assert.deepStrictEqual(
    findings.map((f) => `${f.level} ${f.check} ${f.row ?? "-"}: ${f.message}`),
    [
      "ok rows greeter: config valid (greeter)",
      "ok rows shouter: config valid (shouter)",
      "ok permissions -: every grant is scoped",
      "warning sandbox -: no isolating provider for 2 rows",
      "error broken -: the check failed: probe crashed",
    ],
  );
});
