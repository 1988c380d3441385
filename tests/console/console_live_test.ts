/**
 * The web console under the stream's own limits and live changes, in a real browser (Debian's chromium driven by
 * playwright-core) against the real socket server: a replay cut by `replay_limit` and a reader dropped as `lagged`
 * are shown to the user (and after `lagged` the page resumes from its last seq + 1 with no line twice), and the open
 * agent's status, head seq and usage follow its events while the list filters.
 */
import assert from "node:assert/strict";
import {
  createAgentStack,
  scriptedAdapter,
  type ScriptItem,
  textReply,
} from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { TOKEN, TOKENS } from "../ws/_harness.ts";
import { chromiumMissing, domSeqs, launch, openById, signIn, until } from "./_browser.ts";

const ignore = (await chromiumMissing()) !== undefined;

/** The banner's text, or null while it is hidden. */
const BANNER =
  "(document.querySelector('#banner').hidden ? null : document.querySelector('#banner').textContent)";

Deno.test({
  name:
    "replay_truncated and lagged are shown, and after lagged the page resumes from its last seq + 1 with no line twice",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-console-" });
    await using stack = await createAgentStack({
      adapter: scriptedAdapter([]),
      sqlitePath: `${dir}/s.db`,
    });
    stack.ctx.plugin(
      WsInterface,
      { port: 0, tokens: TOKENS, console: true, replay_limit: 40, queue_limit: 1024 },
      { id: "interfaces.ws" },
    );
    await stack.ctx.idle();
    const ws = stack.ctx.get(WsServiceKey);
    await stack.sessions.create({ session_id: "cut" });
    while ((await stack.sessions.head("cut")) < 100) {
      const head = await stack.sessions.head("cut");
      await stack.sessions.append("cut", {
        type: "user/message",
        payload: { content: `m${head + 1}` },
      });
    }
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await signIn(page, ws.port, TOKEN);
      await openById(page, "cut");
      await until(page, "document.querySelector('#seq').textContent === 'seq 100'", "the replay");
      assert.equal(
        await page.evaluate(BANNER),
        "Replay truncated: events from seq 1 to 60 are not shown (the server replays at most its replay limit)",
      );
      const cut = await domSeqs(page);
      assert.deepStrictEqual(cut, Array.from({ length: 40 }, (_, i) => 61 + i));

      // The page stops reading (paused in the debugger at its next event) while large events are appended, until
      // the server drops it as lagged; once resumed it shows the notice and resubscribes from its last seq + 1.
      const cdp = await context.newCDPSession(page);
      await cdp.send("Debugger.enable");
      const paused = new Promise<void>((resolve) => cdp.once("Debugger.paused", () => resolve()));
      await cdp.send("Debugger.pause");
      const big = "x".repeat(64 * 1024);
      const appendBig = async (i: number): Promise<void> => {
        await stack.sessions.append("cut", {
          type: "tool/result",
          payload: { id: `big${i}`, name: "Read", content: big, is_error: false },
        });
      };
      // The first event always fits the empty queue: the page's handler runs and stops in the debugger.
      await appendBig(0);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        paused,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("the page never paused within 30 s")), 30_000);
        }),
      ]).finally(() => clearTimeout(timer));
      const deadline = Date.now() + 30_000;
      for (let i = 1; ws.stats().lagged === 0; i++) {
        assert.ok(Date.now() < deadline, "the server never dropped the paused page as lagged");
        await appendBig(i);
      }
      const head = await stack.sessions.head("cut");
      await cdp.send("Debugger.resume");
      await cdp.send("Debugger.disable");
      await until(
        page,
        `(${BANNER} ?? '').includes('fell behind the stream')`,
        "the lagged notice",
      );
      await until(
        page,
        `document.querySelector('#seq').textContent === 'seq ${head}'`,
        "the catch-up",
      );
      await until(
        page,
        "document.querySelector('#conn').className.includes('ok')",
        "the reconnect",
      );
      const lines = await page.locator("#lines").textContent();
      assert.match(
        lines ?? "",
        /This view fell behind the stream \(lagged at seq \d+\); reconnecting/,
      );
      const lost = /Connection lost \(4008 lagged\); reconnecting from seq (\d+)/.exec(lines ?? "");
      assert.ok(lost !== null, lines ?? "");
      // The hello of the new socket is a reconnect: it says so, from the same seq.
      const resumed = (lines ?? "").indexOf(`Reconnected; resuming from seq ${lost[1]}`);
      assert.ok(resumed > lost.index, lines ?? "");
      const seqs = await domSeqs(page);
      assert.equal(seqs.at(-1), head);
      assert.deepStrictEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i),
        "every seq once, in order",
      );
    } finally {
      await context.close();
      await browser.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** A reply held at gate `gate` before its text. */
function heldReply(gate: string, text: string): ScriptItem[] {
  const [start, ...rest] = textReply(text);
  return [start!, { type: "gate", gate }, ...rest];
}

Deno.test({
  name: "the open agent's status, head seq and usage follow its events, and the list filters",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const adapter = scriptedAdapter([
      textReply("One."),
      textReply("Two."),
      heldReply("held", "Three."),
    ]);
    await using stack = await createAgentStack({ adapter });
    stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS, console: true }, {
      id: "interfaces.ws",
    });
    await stack.ctx.idle();
    const port = stack.ctx.get(WsServiceKey).port;
    for (const id of ["alpha", "beta-one"]) {
      const agent = await stack.agents.ensure(id);
      agent.send(`Hello ${id}`);
      await agent.idle();
    }
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    const rows = (): Promise<string[]> =>
      page.evaluate<string[]>(
        "[...document.querySelectorAll('tr.agent-row')].map((r) => r.dataset.agentId)",
      );
    try {
      await signIn(page, port, TOKEN);
      await until(page, "document.querySelectorAll('tr.agent-row').length === 2", "the list");
      await page.fill("#filter", "beta");
      assert.deepStrictEqual(await rows(), ["beta-one"]);
      await page.fill("#filter", "IDLE");
      assert.deepStrictEqual(await rows(), ["alpha", "beta-one"]);
      await page.fill("#filter", "nobody");
      assert.deepStrictEqual(await rows(), []);
      assert.equal(await page.locator("#agents-empty").isVisible(), true);
      await page.fill("#filter", "");

      await page.click("tr[data-agent-id=alpha]");
      await until(page, "document.querySelector('#conn').className.includes('ok')", "the stream");
      const head = (await stack.sessions.read("alpha")).at(-1)!;
      await until(
        page,
        `document.querySelector('#agent-status').textContent.startsWith('idle / head seq ${head.seq} / ')`,
        "the listed status",
      );
      const status = (): Promise<string> =>
        page.locator("#agent-status").textContent().then((t) => t ?? "");
      assert.match(await status(), /^idle \/ head seq \d+ \/ \d+ in \/ \d+ out \/ last activity /);
      const usageBefore = (await status()).match(/(\d+) in \/ (\d+) out/)!.slice(1).map(Number);

      // While the model is held the agent is running, with the head and activity of the last event the page got.
      await page.fill("#message", "Hold on");
      await page.click("#send-form button[type=submit]");
      await adapter.reached("held", 30_000);
      await until(
        page,
        "document.querySelector('#agent-status').textContent.startsWith('running / head seq ')",
        "the running status",
      );
      const running = (await stack.sessions.read("alpha")).at(-1)!;
      await until(
        page,
        `document.querySelector('#agent-status').textContent.includes('head seq ${running.seq} ')`,
        "the live head",
      );
      assert.ok((await status()).endsWith(`last activity ${running.at}`), await status());
      adapter.open("held");
      await until(
        page,
        "document.querySelector('.line.turn-end.status-completed:last-child') !== null",
        "the end",
      );
      await until(
        page,
        "document.querySelector('#agent-status').textContent.startsWith('idle / ')",
        "the idle status",
      );
      const last = (await stack.sessions.read("alpha")).at(-1)!;
      assert.ok((await status()).startsWith(`idle / head seq ${last.seq} / `), await status());
      const usageAfter = (await status()).match(/(\d+) in \/ (\d+) out/)!.slice(1).map(Number);
      assert.ok(
        usageAfter[0]! > usageBefore[0]! && usageAfter[1]! > usageBefore[1]!,
        `${usageBefore} -> ${usageAfter}`,
      );

      // Back on the list, the row shows what the page saw, at once.
      await page.click("#back");
      const row = await page.locator("tr[data-agent-id=alpha] td").allTextContents();
      assert.equal(row[2], "idle");
      assert.equal(row[3], String(last.seq));
    } finally {
      await context.close();
      await browser.close();
    }
  },
});
