import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { AgentDisposed } from "@terret/core";
import { subprocessPlugin } from "./subprocess.ts";
import { type Terminals, TerminalsKey, terminalsPlugin } from "./terminals.ts";
import { liveInGroup, mountWorld, recordingSandbox, until, type WrapCall } from "./_testing.ts";

function world(terminals: Record<string, unknown> = {}) {
  return mountWorld({
    rows: [
      { id: "terminals", plugin: terminalsPlugin, config: terminals },
      { id: "subprocess", plugin: subprocessPlugin, config: { kill_grace_ms: 200 } },
    ],
  });
}

/** Reads until the accumulated output equals `expected` (a deadline, not a timing claim). */
async function readUntil(
  terminals: Terminals,
  owner: string,
  name: string,
  expected: string,
): Promise<void> {
  let text = "";
  await until(`terminal "${name}" to show ${JSON.stringify(expected)}`, async () => {
    text += (await terminals.read(owner, name, { wait: 1000 })).output;
    return text.length >= expected.length;
  });
  assert.equal(text, expected);
}

Deno.test("terminals: open, input and read round-trip; read waits for output and reports the exit", async () => {
  await using w = await world();
  const terminals = w.ctx.get(TerminalsKey);
  const opened = await terminals.open("agent", "cat", ["cat"]);
  assert.deepStrictEqual([opened.name, opened.argv, opened.exit], ["cat", ["cat"], null]);
  const waiting = terminals.read("agent", "cat", { wait: 10_000 });
  terminals.input("agent", "cat", "hello\r");
  const first = await waiting;
  assert.deepStrictEqual([first.dropped, first.exit], [0, null]);
  await readUntil(terminals, "agent", "cat", "hello\r\nhello\r\n".slice(first.output.length));
  terminals.input("agent", "cat", "\x04");
  await until("cat to exit", () => terminals.list("agent")[0]!.exit !== null);
  assert.deepStrictEqual(await terminals.read("agent", "cat"), {
    output: "",
    dropped: 0,
    exit: { code: 0, signal: null, success: true },
  });
  assert.throws(
    () => terminals.input("agent", "cat", "more\r"),
    new TerretError("TerminalExited", `Cannot type into terminal "cat": its program has exited`),
  );
  await terminals.close("agent", "cat");
  assert.deepStrictEqual(terminals.list("agent"), []);
});

Deno.test("terminals: resize reaches the program", async () => {
  await using w = await world({ cols: 80, rows: 24 });
  const terminals = w.ctx.get(TerminalsKey);
  await terminals.open("agent", "t", ["bash", "-c", "stty size; read; stty size"]);
  await readUntil(terminals, "agent", "t", "24 80\r\n");
  terminals.resize("agent", "t", 132, 43);
  terminals.input("agent", "t", "\r");
  await readUntil(terminals, "agent", "t", "\r\n43 132\r\n");
});

Deno.test("terminals: at most max_terminals per owner, names unique per owner", async () => {
  await using w = await world({ max_terminals: 2 });
  const terminals = w.ctx.get(TerminalsKey);
  await terminals.open("a", "one", ["sleep", "300"]);
  await assert.rejects(
    terminals.open("a", "one", ["sleep", "300"]),
    new TerretError("TerminalExists", `Cannot open terminal "one": the name is taken`),
  );
  await terminals.open("a", "two", ["sleep", "300"]);
  await assert.rejects(
    terminals.open("a", "three", ["sleep", "300"]),
    new TerretError(
      "TerminalCapExceeded",
      `Cannot open terminal "three": the limit of 2 terminals is reached`,
    ),
  );
  await terminals.open("b", "one", ["sleep", "300"]);
  await terminals.close("a", "one");
  await terminals.open("a", "three", ["sleep", "300"]);
  assert.deepStrictEqual(terminals.list("a").map((t) => t.name), ["two", "three"]);
  assert.deepStrictEqual(terminals.list("b").map((t) => t.name), ["one"]);
});

Deno.test("terminals: the buffer keeps the newest bytes and marks what it dropped", async () => {
  await using w = await world({ buffer_bytes: 100 });
  const terminals = w.ctx.get(TerminalsKey);
  await terminals.open("a", "flood", [
    "bash",
    "-c",
    "head -c 1000 /dev/zero | tr '\\0' z; printf END",
  ]);
  await until("the flood to end", () => terminals.list("a")[0]!.exit !== null);
  assert.deepStrictEqual(await terminals.read("a", "flood"), {
    output: `[… 903 bytes dropped …]\n${"z".repeat(97)}END`,
    dropped: 903,
    exit: { code: 0, signal: null, success: true },
  });
  assert.deepStrictEqual(await terminals.read("a", "flood"), {
    output: "",
    dropped: 0,
    exit: { code: 0, signal: null, success: true },
  });
});

Deno.test("terminals: close is idempotent and reaps the whole group", async () => {
  await using w = await world();
  const terminals = w.ctx.get(TerminalsKey);
  const { pid } = await terminals.open("a", "t", ["bash", "-c", "sleep 300 & sleep 300"]);
  await Promise.all([terminals.close("a", "t"), terminals.close("a", "t")]);
  await terminals.close("a", "t");
  assert.deepStrictEqual(await liveInGroup(pid), []);
  assert.deepStrictEqual(terminals.list("a"), []);
  await assert.rejects(
    terminals.read("a", "t"),
    new TerretError("TerminalNotFound", `Cannot find terminal "t"`),
  );
  assert.throws(
    () => terminals.input("a", "t", "x"),
    new TerretError("TerminalNotFound", `Cannot find terminal "t"`),
  );
});

Deno.test("terminals: agent/disposed closes the agent's terminals; stopping the row closes all", async () => {
  const w = await world();
  const terminals = w.ctx.get(TerminalsKey);
  const one = await terminals.open("agent-1", "a", ["sleep", "300"]);
  const two = await terminals.open("agent-1", "b", ["sleep", "300"]);
  const other = await terminals.open("agent-2", "a", ["sleep", "300"]);
  w.ctx.emit(AgentDisposed, { agent_id: "agent-1", session_id: "s-1" });
  await terminals.closeAll("agent-1");
  assert.deepStrictEqual(terminals.list("agent-1"), []);
  assert.deepStrictEqual(terminals.list("agent-2").map((t) => t.name), ["a"]);
  assert.deepStrictEqual(
    [await liveInGroup(one.pid), await liveInGroup(two.pid)],
    [[], []],
  );
  await w.loader.fiber("terminals")!.dispose();
  assert.deepStrictEqual(terminals.list("agent-2"), []);
  assert.deepStrictEqual(await liveInGroup(other.pid), []);
  await assert.rejects(
    terminals.open("agent-2", "c", ["true"]),
    new TerretError(
      "ServiceStopped",
      `Cannot open terminal "c": the terminals service is stopped`,
    ),
  );
  await w[Symbol.asyncDispose]();
});

Deno.test("terminals: programs start through the sandbox with a terminal", async () => {
  const calls: WrapCall[] = [];
  await using w = await mountWorld({
    sandbox: { plugin: recordingSandbox(calls) },
    rows: [
      { id: "terminals", plugin: terminalsPlugin, config: {} },
      { id: "subprocess", plugin: subprocessPlugin, config: {} },
    ],
  });
  const terminals = w.ctx.get(TerminalsKey);
  await terminals.open("a", "mark", ["printenv", "SANDBOX_MARK"]);
  await readUntil(terminals, "a", "mark", "recorder\r\n");
  assert.deepStrictEqual(calls, [
    { argv: ["printenv", "SANDBOX_MARK"], cwd: w.dir, tty: true, columns: 120, rows: 40 },
  ]);
});
