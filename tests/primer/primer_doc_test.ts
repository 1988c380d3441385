import assert from "node:assert/strict";

Deno.test("docs/hames-primer.md carries the primer plugin and its test verbatim", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/hames-primer.md", import.meta.url));
  const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
  const files = await Promise.all(
    ["budget.ts", "budget_test.ts"].map((name) =>
      Deno.readTextFile(new URL(name, import.meta.url))
    ),
  );
  assert.deepStrictEqual(blocks, files);
});
