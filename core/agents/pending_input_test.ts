import assert from "node:assert/strict";
import { createContext } from "@terret/hames";
import { SessionLog } from "@terret/core";
import { MemorySessionStore } from "@terret/core/sessions";
import { readPendingInput } from "./pending_input.ts";

Deno.test("readPendingInput(): settled stops before the first unclaimed input, and a read after it still finds that input", async () => {
  await using ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  await log.create({ session_id: "s" });
  const queue = async (content: string): Promise<number> =>
    (await log.append("s", {
      type: "input/queued",
      payload: { kind: "message", content, wake: true },
    })).seq;
  const claim = (content: string, seq: number) =>
    log.append("s", { type: "user/message", payload: { content, queued_seq: seq } });

  assert.deepStrictEqual(await readPendingInput(log, "s"), { pending: [], through: 0, settled: 0 });
  const q1 = await queue("one");
  const q2 = await queue("two");
  const q3 = await queue("three");
  await claim("one", q1);
  await claim("three", q3);

  const first = await readPendingInput(log, "s");
  assert.deepStrictEqual(first.pending.map((item) => item.seq), [q2]);
  assert.deepStrictEqual([first.through, first.settled], [q3, q2 - 1]);
  // The unclaimed input lies after the watermark: the next read finds it again.
  const again = await readPendingInput(log, "s", { after: first.settled });
  assert.deepStrictEqual(again, first);

  await claim("two", q2);
  const claimed = await readPendingInput(log, "s", { after: again.settled });
  assert.deepStrictEqual(claimed, { pending: [], through: q3, settled: q3 });
  // Nothing queued since: the read from the watermark finds nothing and keeps it.
  assert.deepStrictEqual(await readPendingInput(log, "s", { after: claimed.settled }), claimed);
});
