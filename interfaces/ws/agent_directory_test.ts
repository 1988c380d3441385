/**
 * `GET /v1/agents` pages cost the page, not the store: session ids are listed a bounded batch at a time from the
 * cursor, and the event loop gets turns while a page is gathered.
 */
import assert from "node:assert/strict";
import { setImmediate } from "node:timers";
import { createContext } from "@terret/hames";
import { SessionLog, type Sessions } from "@terret/core";
import { MemorySessionStore, type StoreListOptions } from "@terret/core/sessions";
import { listAgents } from "./agent_directory.ts";
import type { AgentGateway } from "./agent_gateway.ts";

const idle: AgentGateway = {
  open: () => Promise.reject(new Error("not used")),
  state: () => ({ status: "idle", resident: false }),
  figures: () => {
    throw new Error("not used");
  },
};

/** `sessions`, recording each list's options and the ids it returned, and counting head reads. */
function recording(sessions: Sessions, options: { ignorePaging?: boolean } = {}): {
  sessions: Sessions;
  lists: { options: StoreListOptions; ids: number }[];
  heads: { count: number };
} {
  const lists: { options: StoreListOptions; ids: number }[] = [];
  const heads = { count: 0 };
  const proxy = new Proxy(sessions, {
    get(target, key) {
      if (key === "list") {
        return async (list: StoreListOptions = {}) => {
          // A page that never ends fails here instead of hanging the test.
          if (lists.length >= 1000) throw new Error("a page listed the store 1,000 times");
          const { after: _after, limit: _limit, ...rest } = list;
          const ids = await target.list(options.ignorePaging ? rest : list);
          lists.push({ options: list, ids: ids.length });
          return ids;
        };
      }
      if (key === "head") heads.count++;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { sessions: proxy, lists, heads };
}

async function logWith(count: number): Promise<SessionLog> {
  const ctx = createContext({ mode: "test" });
  const log = new SessionLog(ctx, new MemorySessionStore());
  for (let i = 0; i < count; i++) {
    await log.create({ session_id: `agent-${String(i).padStart(3, "0")}` });
  }
  return log;
}

/** Every page from the start, following `next_after`. */
async function allPages(
  sessions: Sessions,
  granted: (id: string) => boolean,
  limit: number,
): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await listAgents(sessions, idle, granted, { after, limit });
    pages.push(page.agents.map((agent) => agent.agent_id));
    if (page.next_after === null) return pages;
    assert.equal(page.next_after, page.agents.at(-1)!.agent_id);
    after = page.next_after;
  }
}

Deno.test("a page lists the store a bounded batch at a time from its cursor, and paging visits every granted agent once", async () => {
  const log = await logWith(700);
  const { sessions, lists } = recording(log);
  const first = await listAgents(sessions, idle, () => true, { after: undefined, limit: 100 });
  assert.equal(first.agents.length, 100);
  assert.equal(first.next_after, "agent-099");
  // One batch holds the page and the id after it: the other 444 sessions are never listed.
  assert.deepStrictEqual(lists, [{ options: { limit: 256 }, ids: 256 }]);

  lists.length = 0;
  const second = await listAgents(sessions, idle, () => true, { after: "agent-650", limit: 100 });
  assert.deepStrictEqual(
    [second.agents[0]!.agent_id, second.agents.length, second.next_after],
    ["agent-651", 49, null],
  );
  assert.deepStrictEqual(lists, [{ options: { after: "agent-650", limit: 256 }, ids: 49 }]);

  // A narrow grant: every 60th agent, in pages of 4, gathered over several batches.
  const granted = (id: string): boolean => Number(id.slice(6)) % 60 === 0;
  const expected = Array.from({ length: 12 }, (_, i) => `agent-${String(i * 60).padStart(3, "0")}`);
  lists.length = 0;
  const pages = await allPages(sessions, granted, 4);
  assert.deepStrictEqual(pages, [expected.slice(0, 4), expected.slice(4, 8), expected.slice(8)]);
  for (const list of lists) assert.equal(list.options.limit, 256);
});

Deno.test("a page over a store that ignores after and limit still ends, with the same agents", async () => {
  const log = await logWith(300);
  const granted = (id: string): boolean => id.endsWith("7");
  const expected = await allPages(log, granted, 7);
  const { sessions, lists } = recording(log, { ignorePaging: true });
  assert.deepStrictEqual(await allPages(sessions, granted, 7), expected);
  assert.equal(expected.flat().length, 30);
  assert.ok(lists.every((list) => list.ids === 300), "the store answered every session each time");
});

Deno.test("the event loop gets turns while a page is gathered", async () => {
  const log = await logWith(100);
  const { sessions, heads } = recording(log);
  let headsWhenATaskRan: number | undefined;
  setImmediate(() => headsWhenATaskRan = heads.count);
  const page = await listAgents(sessions, idle, () => true, { after: undefined, limit: 100 });
  assert.equal(page.agents.length, 100);
  // The first turn is taken before the first agent's summary.
  assert.equal(headsWhenATaskRan, 0, "a task queued with the request ran before any summary");
});
