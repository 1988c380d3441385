import assert from "node:assert/strict";
import { prepareRows, resolveProfile } from "@terret/terret";
import { cachesCheck } from "./caches_check.ts";

/** A home whose `dev` profile is the base bundle, with `rows` patched in; the check's input from its real rows. */
async function profile(rows: string) {
  const home = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-cachescheck-" }));
  try {
    await Deno.mkdir(`${home}/profiles/dev`, { recursive: true });
    await Deno.writeTextFile(
      `${home}/profiles/dev/profile.yml`,
      "bundles: [base]\nsettings:\n  sandbox:\n    image: img:1\n  sessions:\n    path: sessions.db\n  llm:\n    model: test/model\n",
    );
    await Deno.writeTextFile(`${home}/profiles/dev/patch.yml`, `rows:\n${rows}`);
    const env = { get: () => undefined };
    const resolved = await resolveProfile("dev", { home, cwd: home, env });
    const prepared = await prepareRows(resolved, { env });
    return { resolved, env, allowConfigCode: false, prepared };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("cachesCheck warns when more agents may be resident than the history cache holds", async () => {
  const defaults = await profile("  - id: agents\n    config: {}\n");
  assert.deepStrictEqual(await cachesCheck.run(defaults), [{
    level: "ok",
    check: "caches",
    row: "sessions",
    message:
      'the history cache holds 1024 sessions, at least the 128 agents row "agents" keeps resident',
  }]);
  const many = await profile("  - id: agents\n    config: { max_agents: 5000 }\n");
  assert.deepStrictEqual(await cachesCheck.run(many), [{
    level: "warning",
    check: "caches",
    row: "sessions",
    message:
      `history_cache_sessions (1024) is below row "agents"'s max_agents (5000): with more agents taking steps ` +
      "than the cache holds, each step replays its agent's whole history from the store; set " +
      'history_cache_sessions to at least 5000 on row "sessions"',
  }]);
  const sized = await profile(
    "  - id: agents\n    config: { max_agents: 5000 }\n  - id: sessions\n    config: { history_cache_sessions: 5000 }\n",
  );
  assert.equal((await cachesCheck.run(sized))[0]?.level, "ok");
  const without = await profile("  - id: agents\n    disabled: true\n");
  assert.deepStrictEqual(await cachesCheck.run(without), []);
});
