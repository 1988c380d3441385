import assert from "node:assert/strict";
import { parseMcpToolName, TOOL_NAME_PATTERN } from "../tools/tool.ts";
import { MAX_TOOL_NAME_LENGTH, sanitiseMcpToolName } from "./names.ts";

/** What the registry makes of a name: whether it accepts it, and the server it parses out. */
function accepted(name: string): [boolean, string | undefined] {
  return [TOOL_NAME_PATTERN.test(name), parseMcpToolName(name)?.server];
}

Deno.test("sanitiseMcpToolName() keeps provider-safe names as they are", () => {
  assert.deepStrictEqual(
    ["echo", "get-sum", "read_text_file", "A1"].map((tool) => sanitiseMcpToolName("fs", tool)),
    ["mcp__fs__echo", "mcp__fs__get-sum", "mcp__fs__read_text_file", "mcp__fs__A1"],
  );
});

Deno.test("sanitiseMcpToolName() replaces unsafe characters and drops a leading _ or -", () => {
  assert.deepStrictEqual(
    ["files.read", "a b/c", "_private", "--x", "é", "..."].map((tool) =>
      sanitiseMcpToolName("srv", tool)
    ),
    [
      "mcp__srv__files_read",
      "mcp__srv__a_b_c",
      "mcp__srv__private",
      "mcp__srv__x",
      "mcp__srv__tool",
      "mcp__srv__tool",
    ],
  );
  assert.deepStrictEqual(
    ["files.read", "_private", "a__b", "x-y_z"].map((tool) =>
      accepted(sanitiseMcpToolName("my-srv_1", tool))
    ),
    [[true, "my-srv_1"], [true, "my-srv_1"], [true, "my-srv_1"], [true, "my-srv_1"]],
  );
});

Deno.test("sanitiseMcpToolName() cuts long names to 64 characters with a hash of the original", () => {
  const long = `${"x".repeat(70)}_one`;
  const other = `${"x".repeat(70)}_two`;
  const a = sanitiseMcpToolName("server", long);
  const b = sanitiseMcpToolName("server", other);
  assert.deepStrictEqual([a.length, b.length], [MAX_TOOL_NAME_LENGTH, MAX_TOOL_NAME_LENGTH]);
  assert.equal(a.slice(0, 55), `mcp__server__${"x".repeat(42)}`);
  assert.notEqual(a, b);
  assert.equal(sanitiseMcpToolName("server", long), a);
  assert.deepStrictEqual([a, b].map(accepted), [[true, "server"], [true, "server"]]);
});

Deno.test("sanitiseMcpToolName() refuses a server name that leaves no room", () => {
  assert.throws(
    () => sanitiseMcpToolName("s".repeat(60), "x".repeat(10)),
    new RangeError(`Cannot name the tools of MCP server "${"s".repeat(60)}": its name is too long`),
  );
});
