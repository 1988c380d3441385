/**
 * The MCP conformance CLI (`@modelcontextprotocol/conformance`, run with Deno: it needs Node ≥ 22 otherwise)
 * drives Terret's MCP client (`conformance_client.ts`) through every client scenario the client claims, over
 * Streamable HTTP. Scenarios not claimed, and why: `elicitation-sep1034-client-defaults` (the client advertises no
 * elicitation capability: an agent harness has no human to fill a form mid-call) and every `auth/*` scenario
 * (OAuth flows; the client authenticates with configured static headers only).
 */
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { CONFORMANCE, DENO, DENO_CHILD_ENV } from "./_world.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLIENT_FROM_ROOT = relative(
  ROOT,
  fileURLToPath(new URL("./conformance_client.ts", import.meta.url)),
);

/** The client scenarios Terret's MCP client claims, with the checks each must pass. */
const CLAIMED: Record<string, number> = { initialize: 1, tools_call: 1, "sse-retry": 3 };

for (const [scenario, checks] of Object.entries(CLAIMED)) {
  Deno.test(`the MCP conformance CLI passes the "${scenario}" client scenario`, async () => {
    const output = await new Deno.Command(DENO, {
      args: [
        "run",
        "-A",
        "--no-config",
        "--no-lock",
        CONFORMANCE,
        "client",
        "--command",
        // The CLI splits the command itself and no quoting survives it, so the paths are relative to its cwd (the
        // checkout's own path may hold spaces).
        `${DENO} run -A --config deno.json ${CLIENT_FROM_ROOT}`,
        "--scenario",
        scenario,
        "--timeout",
        "30000",
      ],
      cwd: ROOT,
      env: { ...DENO_CHILD_ENV },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    // A warning (sse-retry: a reconnect slightly later than the server's `retry` on a loaded machine) is not a
    // failure by the runner's own verdict, so the warning count is not held to zero.
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(text);
    assert.deepStrictEqual(
      [output.code, summary?.slice(1).map(Number)],
      [0, [checks, checks, 0]],
      text,
    );
  });
}
