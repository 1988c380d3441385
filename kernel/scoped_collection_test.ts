import assert from "node:assert/strict";
import { createContext } from "./context.ts";
import { ListenerFailed } from "./events.ts";
import { ScopedCollection } from "./scoped_collection.ts";

function names(): { collection: ScopedCollection<string, readonly string[]>; derived: string[][] } {
  const derived: string[][] = [];
  const collection = new ScopedCollection<string, readonly string[]>((entries) => {
    derived.push([...entries]);
    return Object.freeze([...entries]);
  });
  return { collection, derived };
}

Deno.test("ScopedCollection.view() sees an entry from its owner's subtree only, ancestors' entries first", async () => {
  await using root = createContext({ mode: "test" });
  const { collection } = names();
  const agent = root.fork("agent");
  const sibling = root.fork("sibling");
  const nested = agent.fork("nested");
  collection.add(nested, "nested", "n");
  collection.add(agent, "agent.1", "a1");
  collection.add(root, "root", "r");
  collection.add(agent, "agent.2", "a2");
  assert.deepStrictEqual(
    [root, agent, sibling, nested].map((ctx) => collection.view(ctx)),
    [["root"], ["root", "agent.1", "agent.2"], ["root"], ["root", "agent.1", "agent.2", "nested"]],
  );
});

Deno.test("ScopedCollection entries die with their owner and with their disposer", async () => {
  await using root = createContext({ mode: "test" });
  const { collection } = names();
  const agent = root.fork("agent");
  const off = collection.add(root, "root", "r");
  collection.add(agent, "agent", "a");
  assert.deepStrictEqual(collection.view(agent), ["root", "agent"]);
  await agent.dispose();
  assert.deepStrictEqual(collection.view(root), ["root"]);
  await off();
  assert.deepStrictEqual(collection.view(root), []);
  assert.throws(
    () => collection.add(agent, "late", "late"),
    {
      name: "TerretError",
      code: "ContextDisposed",
      message: 'Cannot late: context "agent" is disposed',
    },
  );
});

Deno.test("ScopedCollection.view() derives once per context until an entry is added or removed", async () => {
  await using root = createContext({ mode: "test" });
  const { collection, derived } = names();
  const agent = root.fork("agent");
  collection.add(root, "a", "a");
  const first = collection.view(agent);
  assert.equal(collection.view(agent), first);
  // The root reaches the same listeners as the agent (which has none of its own): the same view.
  assert.equal(collection.view(root), first);
  assert.deepStrictEqual(derived, [["a"]]);
  const off = collection.add(agent, "b", "b");
  assert.deepStrictEqual(collection.view(agent), ["a", "b"]);
  await off();
  assert.deepStrictEqual(collection.view(agent), ["a"]);
  assert.deepStrictEqual(derived, [["a"], ["a", "b"], ["a"]]);
});

Deno.test("two ScopedCollections on one context never see each other's entries", async () => {
  await using root = createContext({ mode: "test" });
  const tools = names().collection;
  const sections = names().collection;
  tools.add(root, "tool", "t");
  sections.add(root, "section", "s");
  assert.deepStrictEqual([tools.view(root), sections.view(root)], [["tool"], ["section"]]);
});

Deno.test("ScopedCollection.view() of a fork with no entries of its own reuses its parent's view, until an entry is added", async () => {
  await using root = createContext({ mode: "test" });
  const { collection, derived } = names();
  const home = root.fork("home");
  collection.add(root, "root", "r");
  collection.add(home, "home", "h");
  const parent = collection.view(home);
  const agents = [home.fork("agent-1"), home.fork("agent-2"), home.fork("agent-1").fork("nested")];
  // A fork's own listeners of other events do not change what it collects.
  agents[1]!.on(ListenerFailed, () => {});
  for (const agent of agents) assert.equal(collection.view(agent), parent);
  assert.deepStrictEqual(derived, [["root", "home"]]);
  collection.add(agents[0]!, "own", "o");
  assert.deepStrictEqual(agents.map((agent) => collection.view(agent)), [
    ["root", "home", "own"],
    ["root", "home"],
    ["root", "home"],
  ]);
  assert.deepStrictEqual(derived, [["root", "home"], ["root", "home", "own"], ["root", "home"]]);
  // A sibling of the collection's owners sees none of the home's entries, whatever it saw before.
  assert.deepStrictEqual(collection.view(root.fork("sibling")), ["root"]);
});
