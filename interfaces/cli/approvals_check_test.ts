import assert from "node:assert/strict";
import { ApprovalsService, ToolRegistry } from "@terret/core";
import { approvalsConfig } from "@terret/core/approvals";
import type { DoctorInput, PreparedRow } from "@terret/terret";
import { approvalsCheck } from "./approvals_check.ts";

function row(id: string, plugin: unknown, parsed: unknown = {}): PreparedRow {
  return {
    composed: { id },
    plugin,
    config: parsed,
    parsed,
    envRead: [],
  } as unknown as PreparedRow;
}

function input(prepared: PreparedRow[]): DoctorInput {
  return { prepared } as unknown as DoctorInput;
}

Deno.test("approvalsCheck reports the stance, warns when the row is disabled, and is quiet without tools", async () => {
  const tools = row("tools", ToolRegistry);
  const config = approvalsConfig.parse({
    allow: ["Bash(git status)", "Read(./src/**)"],
    deny: ["Bash(rm:*)"],
    deadline: "10m",
    unattended: ["orch-*"],
  });
  assert.deepStrictEqual(
    await approvalsCheck.run(input([tools, row("approvals", ApprovalsService, config)])),
    [{
      level: "ok",
      check: "approvals",
      row: "approvals",
      message:
        "policy tools ask unless a rule decides (rules: 2 allow, 0 ask, 1 deny); always tools (Bash " +
        "outside an isolating sandbox) ask on every call; requests expire after 10m (denied); unattended " +
        "agents (never asked, denied instead): orch-*",
    }],
  );
  assert.deepStrictEqual(await approvalsCheck.run(input([tools])), [{
    level: "warning",
    check: "approvals",
    message:
      "no approvals row is enabled: every tool whose approval is policy or always (Write, Edit, " +
      "Bash, WebFetch, terminals, MCP tools) is denied (fails closed); enable row approvals to ask instead",
  }]);
  assert.deepStrictEqual(await approvalsCheck.run(input([])), [{
    level: "info",
    check: "approvals",
    message: "no tool registry row is enabled, so no call can need an approval",
  }]);
});
