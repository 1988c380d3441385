import assert from "node:assert/strict";
import { isInside } from "./paths.ts";

Deno.test("isInside() guards the trailing separator and refuses relative paths", () => {
  const cases: [string, string, boolean][] = [
    ["/ws", "/ws", true],
    ["/ws/a/b", "/ws", true],
    ["/ws/", "/ws", true],
    ["/ws-evil", "/ws", false],
    ["/ws-evil/x", "/ws", false],
    ["/ws/../etc", "/ws", false],
    ["/other", "/ws", false],
    ["ws/a", "/ws", false],
    ["/a", "/", true],
  ];
  assert.deepStrictEqual(
    cases.map(([path, dir]) => isInside(path, dir)),
    cases.map(([, , inside]) => inside),
  );
});
