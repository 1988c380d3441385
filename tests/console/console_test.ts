/**
 * The web console in a real browser (Debian's chromium driven by playwright-core) against the real socket server
 * (`interfaces.ws` with `console: true` on a real `Deno.serve` listener) and the scripted model adapter: sign-in
 * (a wrong token is refused visibly), the agents list, a reply streaming into the page while the model is held
 * mid-reply, a tool call and its result, model HTML shown as text and never run, cancel, a reconnect from the last
 * seq + 1 with no duplicate line, the CSP and the token kept out of every URL and of localStorage.
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.56.1";
import {
  createAgentStack,
  scriptedAdapter,
  scriptedTool,
  type ScriptItem,
  textReply,
  toolCallsReply,
} from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { WsClient } from "../ws/_clients.ts";
import { TOKEN, TOKENS } from "../ws/_harness.ts";
import { stablePort } from "../ports.ts";
import { chromiumMissing, launch, until } from "./_browser.ts";

const XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

const ignore = await chromiumMissing() !== undefined;

/** Streams "Hello ", "from ", "the console." with a gate before each delta. */
function gatedReply(): ScriptItem[] {
  const items: ScriptItem[] = [{ type: "message_start" }];
  ["Hello ", "from ", "the console."].forEach((text, i) => {
    items.push({ type: "gate", gate: `g${i}` }, { type: "text_delta", text });
  });
  return [...items, ...textReply([]).slice(1)];
}

const streamingText = "document.querySelector('.line.assistant.streaming .text')?.textContent";

Deno.test({
  name:
    "the console signs in, lists agents, streams a reply, shows tools and model HTML as text, cancels, reconnects",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const adapter = scriptedAdapter([
      textReply("Ready."),
      gatedReply(),
      toolCallsReply([{ id: "c1", name: "lookup", args: { q: "weather" } }]),
      textReply(XSS),
      [{ type: "message_start" }, { type: "gate", gate: "slow" }, {
        type: "text_delta",
        text: "never",
      }],
      textReply("After the reconnect."),
    ]);
    await using stack = await createAgentStack({ adapter, allow: ["lookup"] });
    stack.tools.register(stack.ctx, scriptedTool("lookup").definition);
    stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS, console: true }, {
      id: "interfaces.ws",
    });
    await stack.ctx.idle();
    const port = stack.ctx.get(WsServiceKey).port;
    const seeded = await stack.agents.ensure("seeded");
    seeded.send("Get ready");
    await seeded.idle();

    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    const urls: string[] = [];
    const headersSeen: string[] = [];
    page.on("request", (request) => {
      urls.push(request.url());
      headersSeen.push(JSON.stringify(request.headers()));
    });
    page.on("websocket", (socket) => urls.push(socket.url()));
    try {
      const response = await page.goto(`http://127.0.0.1:${port}/`);
      assert.ok(response !== null);
      assert.equal(response.status(), 200);
      const csp = (await response.allHeaders())["content-security-policy"] ?? "";
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'/);
      assert.match(csp, /connect-src 'self'/);
      assert.equal((await response.allHeaders())["x-content-type-options"], "nosniff");

      // A wrong token: the server's 401 is shown and nothing is kept.
      await page.fill("#token", "wrong-token-0123456789abcdef");
      await page.click("#login-form button[type=submit]");
      await until(
        page,
        "document.querySelector('#login-error').textContent.includes('401')",
        "the refusal",
      );
      assert.equal(await page.evaluate("sessionStorage.length"), 0);

      // The right token: the list shows the seeded agent.
      await page.fill("#token", TOKEN);
      await page.click("#login-form button[type=submit]");
      await until(
        page,
        "document.querySelector('tr[data-agent-id=seeded]') !== null",
        "the agents list",
      );
      const row = await page.locator("tr[data-agent-id=seeded]").textContent();
      assert.match(row ?? "", /seeded.*idle/);

      // Open it: the replayed transcript, then a reply that streams in while the model is held mid-reply.
      await page.click("tr[data-agent-id=seeded]");
      await until(
        page,
        "document.querySelector('#lines').textContent.includes('Ready.')",
        "replay",
      );
      await page.fill("#message", "Stream please");
      await page.click("#send-form button[type=submit]");
      await adapter.reached("g0", 30_000);
      adapter.open("g0");
      await adapter.reached("g1", 30_000);
      await until(page, `${streamingText} === 'Hello '`, "the first intermediate render");
      adapter.open("g1");
      await adapter.reached("g2", 30_000);
      await until(page, `${streamingText} === 'Hello from '`, "the second intermediate render");
      adapter.open("g2");
      await until(
        page,
        "[...document.querySelectorAll('.line.assistant .text')].some((n) => n.textContent === " +
          "'Hello from the console.') && document.querySelector('.line.streaming') === null",
        "the final reply",
      );
      await until(
        page,
        "[...document.querySelectorAll('.action.ok')].some((n) => n.textContent.startsWith('ack'))",
        "the message's ack",
      );

      // A tool call with its arguments and result, then model HTML that must stay text.
      await page.fill("#message", "Weather?");
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "[...document.querySelectorAll('.line.assistant .text')].some((n) => n.textContent.includes('onerror'))",
        "the HTML reply",
      );
      const tool = await page.locator(".line.tool").last().textContent();
      assert.match(tool ?? "", /lookup/);
      assert.match(tool ?? "", /"q": "weather"/);
      assert.match(tool ?? "", /lookup ok: \{"q":"weather"\}/);
      assert.equal(
        await page.locator(".line.tool details.result").last().getAttribute("open"),
        null,
        "the result starts collapsed",
      );
      assert.equal(await page.locator("#lines img, #lines script").count(), 0);
      assert.equal(await page.evaluate("window.__pwned"), undefined);
      const texts = await page.locator(".line.assistant .text").allTextContents();
      assert.ok(texts.includes(XSS), `the HTML reply is shown verbatim: ${JSON.stringify(texts)}`);

      // Cancel a turn the model holds.
      await page.fill("#message", "Take your time");
      await page.click("#send-form button[type=submit]");
      await adapter.reached("slow", 30_000);
      await page.click("#cancel");
      await until(
        page,
        "document.querySelector('.line.turn-end.status-cancelled') !== null",
        "cancel",
      );

      // Another client supersedes the page's socket: the page reconnects from its last seq + 1.
      const before = await page.evaluate<number>(
        "Number(document.querySelector('#lines .line[data-seq]:last-of-type')?.dataset.seq ?? 0)",
      );
      const intruder = await WsClient.open(
        `ws://127.0.0.1:${port}/v1/agents/seeded/stream`,
        { token: TOKEN },
      );
      await until(
        page,
        "document.querySelector('#lines').textContent.includes('reconnecting from seq')",
        "the visible drop",
      );
      await until(
        page,
        "document.querySelector('#conn').className.includes('ok')",
        "the reconnect",
      );
      await intruder.close();
      await page.fill("#message", "Still there?");
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "document.querySelector('#lines').textContent.includes('After the reconnect.')",
        "the reply after the reconnect",
      );
      const seqs = (await page.evaluate(
        "[...document.querySelectorAll('#lines .line[data-seq]')].map((n) => Number(n.dataset.seq))",
      )) as number[];
      assert.deepStrictEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), "no line twice");
      assert.ok(seqs.at(-1)! > before);
      const users = await page.locator(".line.user .text").allTextContents();
      assert.deepStrictEqual(users, [
        "Get ready",
        "Stream please",
        "Weather?",
        "Take your time",
        "Still there?",
      ]);

      if (Deno.env.get("UPDATE_SCREENSHOTS") === "1") {
        await page.screenshot({
          path: fileURLToPath(new URL("../../docs/console.png", import.meta.url)),
        });
      }

      // The token never appears in a URL or request line, and is kept only in sessionStorage.
      assert.ok(urls.some((url) => url.includes("/v1/agents/seeded/stream")));
      assert.deepStrictEqual(urls.filter((url) => url.includes(TOKEN)), []);
      assert.ok(headersSeen.some((headers) => headers.includes(`Bearer ${TOKEN}`)));
      assert.equal(await page.evaluate("JSON.stringify(localStorage)"), "{}");
      assert.equal(await page.evaluate("sessionStorage.getItem('terret.console.token')"), TOKEN);
    } finally {
      await context.close();
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "the console pins an open approval and answers it with remember, and sends steer and set_policy",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const adapter = scriptedAdapter([
      toolCallsReply([{ id: "c1", name: "Bash", args: { command: "npm test --watch=false" } }]),
      textReply("Green."),
    ]);
    await using stack = await createAgentStack({ adapter, allow: ["Bash"], approvals: {} });
    const tool = scriptedTool("Bash", { approval: "always", concurrency: "serial" });
    stack.tools.register(stack.ctx, tool.definition);
    stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS, console: true }, {
      id: "interfaces.ws",
    });
    await stack.ctx.idle();
    const port = stack.ctx.get(WsServiceKey).port;
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.fill("#token", TOKEN);
      await page.click("#login-form button[type=submit]");
      await until(page, "!document.querySelector('#agents').hidden", "the agents view");
      await page.fill("#open-id", "gated");
      await page.click("#open-form button[type=submit]");
      await until(page, "document.querySelector('#conn').className.includes('ok')", "the stream");
      await page.fill("#message", "Run the tests");
      await page.click("#send-form button[type=submit]");
      await until(page, "document.querySelector('.approval-card') !== null", "the pinned approval");
      const card = await page.locator(".approval-card").textContent();
      assert.match(card ?? "", /Approve Bash\?/);
      assert.match(card ?? "", /npm test --watch=false/);
      assert.equal(tool.calls.length, 0, "nothing runs before the answer");
      await page.check(".approval-card .remember");
      await page.click(".approval-card button.allow");
      await until(
        page,
        "document.querySelector('.approval-card') === null && " +
          "document.querySelector('.line.turn-end.status-completed') !== null",
        "the answered approval and the finished turn",
      );
      assert.equal(tool.calls.length, 1);
      const lines = await page.locator("#lines").textContent();
      assert.match(lines ?? "", /approval allow \(remembered Bash\(npm test:\*\)\)/);

      // Steer (no wake: it waits for a turn) and narrow the policy: both acked.
      await page.fill("#steer", "Prefer small diffs");
      await page.click("#steer-form button[type=submit]");
      await page.fill("#policy", "Read, Bash");
      await page.click("#policy-form button[type=submit]");
      await until(
        page,
        "[...document.querySelectorAll('.action.ok')].length === 4",
        "the acks of message, approve, steer and set_policy",
      );
      const events = await stack.sessions.read("gated");
      const policy = events.find((event) => event.type === "policy/updated");
      assert.deepStrictEqual(policy?.payload, { allow: ["Read", "Bash"] });
      const steer = events.filter((event) => event.type === "input/queued").at(-1)?.payload as {
        kind: string;
        wake: boolean;
      };
      assert.deepStrictEqual({ kind: steer.kind, wake: steer.wake }, {
        kind: "steer",
        wake: false,
      });
    } finally {
      await context.close();
      await browser.close();
    }
  },
});

/** Mounts the socket server with the console on `port` over the SQLite file `path`. */
async function mountAt(
  adapter: ReturnType<typeof scriptedAdapter>,
  path: string,
  port: number,
  ws: Readonly<Record<string, unknown>> = {},
) {
  const stack = await createAgentStack({ adapter, sqlitePath: path });
  stack.ctx.plugin(WsInterface, { port, tokens: TOKENS, console: true, ...ws }, {
    id: "interfaces.ws",
  });
  await stack.ctx.idle();
  return stack;
}

/** Signs in and opens agent `agentId`, waiting for its live stream. */
async function openAgent(page: Page, port: number, agentId: string): Promise<void> {
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.fill("#token", TOKEN);
  await page.click("#login-form button[type=submit]");
  await until(page, "!document.querySelector('#agents').hidden", "the agents view");
  await page.fill("#open-id", agentId);
  await page.click("#open-form button[type=submit]");
  await until(page, "document.querySelector('#conn').className.includes('ok')", "the stream");
}

Deno.test({
  name: "Edit and Write calls render as diffs, with their text shown as text",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-console-" });
    const adapter = scriptedAdapter([
      toolCallsReply([
        {
          id: "e1",
          name: "Edit",
          args: {
            file_path: "/ws/a.ts",
            old_string: "const a = 1;\nconst b = 2;\nkeep();",
            new_string: "const a = 1;\nconst b = 3;\nconst c = 4;\nkeep();",
          },
        },
        { id: "w1", name: "Write", args: { file_path: "/ws/b.html", content: "<b>new</b>" } },
      ]),
      textReply("Done."),
    ]);
    const stack = await createAgentStack({
      adapter,
      allow: ["Edit", "Write"],
      sqlitePath: `${dir}/s.db`,
    });
    stack.tools.register(stack.ctx, scriptedTool("Edit").definition);
    stack.tools.register(stack.ctx, scriptedTool("Write").definition);
    stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS, console: true }, {
      id: "interfaces.ws",
    });
    await stack.ctx.idle();
    const port = stack.ctx.get(WsServiceKey).port;
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await openAgent(page, port, "editor");
      await page.fill("#message", "Fix it");
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "document.querySelector('.line.turn-end.status-completed') !== null",
        "the turn",
      );
      const diffs = await page.locator(".diff").evaluateAll((nodes) =>
        nodes.map((node) => [...node.children].map((row) => `${row.className}|${row.textContent}`))
      );
      assert.deepStrictEqual(diffs, [
        [
          "diff-file|/ws/a.ts",
          "ctx|  const a = 1;",
          "del|- const b = 2;",
          "add|+ const b = 3;",
          "add|+ const c = 4;",
          "ctx|  keep();",
        ],
        ["diff-file|/ws/b.html", "add|+ <b>new</b>"],
      ]);
      assert.equal(await page.locator("#lines b").count(), 0);
    } finally {
      await context.close();
      await browser.close();
      await stack.dispose();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "the console continues the transcript after the server restarts, with no duplicate line",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-console-" });
    // The server comes back on the same port: one no parallel test's socket is handed in between.
    const port = stablePort();
    let stack = await mountAt(
      scriptedAdapter([textReply("Before the restart.")]),
      `${dir}/s.db`,
      port,
    );
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await openAgent(page, port, "phoenix");
      await page.fill("#message", "First");
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "document.querySelector('.line.turn-end.status-completed') !== null",
        "the first turn",
      );
      await stack.dispose();
      await until(page, "document.querySelector('#conn').className.includes('bad')", "the drop");
      stack = await mountAt(
        scriptedAdapter([textReply("After the restart.")]),
        `${dir}/s.db`,
        port,
      );
      await until(
        page,
        "document.querySelector('#conn').className.includes('ok')",
        "the reconnect",
      );
      await page.fill("#message", "Second");
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "document.querySelector('#lines').textContent.includes('After the restart.')",
        "the reply after the restart",
      );
      await until(
        page,
        "document.querySelectorAll('.line.turn-end.status-completed').length >= 2",
        "the second turn's end",
      );
      const seqs = (await page.evaluate(
        "[...document.querySelectorAll('#lines .line[data-seq]')].map((n) => Number(n.dataset.seq))",
      )) as number[];
      assert.deepStrictEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), "no line twice");
      const stored = (await stack.sessions.read("phoenix")).at(-1)!.seq;
      assert.equal(seqs.at(-1), stored);
      assert.deepStrictEqual(await page.locator(".line.user .text").allTextContents(), [
        "First",
        "Second",
      ]);
      assert.deepStrictEqual(await page.locator(".line.assistant .text").allTextContents(), [
        "Before the restart.",
        "After the restart.",
      ]);
    } finally {
      await context.close();
      await browser.close();
      await stack.dispose();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a message over the frame limit shows the server's 1009 close, and the console reconnects",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-console-" });
    await using stack = await mountAt(scriptedAdapter([]), `${dir}/s.db`, 0, {
      max_frame_bytes: 1024,
    });
    const port = stack.ctx.get(WsServiceKey).port;
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await openAgent(page, port, "big");
      await page.fill("#message", "x".repeat(2000));
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "document.querySelector('#lines').textContent.includes('Connection lost (1009 frame too big)')",
        "the server's refusal",
      );
      await until(
        page,
        "document.querySelector('#conn').className.includes('ok')",
        "the reconnect",
      );
      assert.deepStrictEqual(await stack.sessions.read("big").then((events) => events.length), 0);
    } finally {
      await context.close();
      await browser.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** Milliseconds a plain protocol client takes to read agent `long`'s replay to seq 10,000. */
async function plainRead(port: number): Promise<number> {
  const started = performance.now();
  const client = await WsClient.open(`ws://127.0.0.1:${port}/v1/agents/long/stream`, {
    token: TOKEN,
  });
  await client.next();
  client.send({ type: "subscribe", from_seq: 1 });
  await client.readUntil((frame) =>
    frame.type === "event" && (frame.event as { seq: number }).seq === 10_000
  );
  const elapsed = performance.now() - started;
  await client.close();
  return elapsed;
}

/**
 * Milliseconds a bare WebSocket in `page` (no rendering, no parsing) takes to read agent `long`'s replay to seq
 * 10,000: the browser's own floor for the same work.
 */
async function browserRead(page: Page): Promise<number> {
  return await page.evaluate<number>(`new Promise((resolve, reject) => {
    const started = performance.now();
    let frames = 0;
    const socket = new WebSocket("ws://" + location.host + "/v1/agents/long/stream",
      ["terret.v1", "bearer." + sessionStorage.getItem("terret.console.token")]);
    socket.onerror = () => reject(new Error("the bare socket failed"));
    socket.onmessage = () => {
      frames++;
      if (frames === 1) socket.send('{"type":"subscribe","from_seq":1}');
      if (frames === 10001) {
        socket.close();
        resolve(performance.now() - started);
      }
    };
  })`);
}

/** A predicate (page source) that holds when the line of `seq` is in the DOM and wholly inside the transcript box. */
function visible(seq: number): string {
  return `(() => {
    const node = document.querySelector('#lines .line[data-seq="${seq}"]');
    if (node === null) return false;
    const box = document.querySelector('#lines').getBoundingClientRect();
    const rect = node.getBoundingClientRect();
    return rect.height > 0 && rect.top >= box.top - 1 && rect.bottom <= box.bottom + 1;
  })()`;
}

/** The seqs of the transcript lines in the DOM, in document order. */
async function domSeqs(page: Page): Promise<number[]> {
  return await page.evaluate<number[]>(
    "[...document.querySelectorAll('#lines .line[data-seq]')].map((n) => Number(n.dataset.seq))",
  );
}

/** Appends turns of user message, tool call, result, answer and step end to `id` until its head is `upTo`. */
async function seedTurns(
  sessions: { append(id: string, input: { type: string; payload: unknown }): Promise<unknown> },
  id: string,
  from: number,
  upTo: number,
  chunks = 0,
): Promise<void> {
  let seq = from;
  for (let turn = 0; seq < upTo; turn++) {
    const call = `call_${from}_${turn}`;
    const batch = [
      { type: "user/message", payload: { content: `Question ${from}.${turn}` } },
      {
        type: "tool/call",
        payload: { id: call, name: "Read", args: { file_path: `/ws/f${turn}.txt` } },
      },
      {
        type: "tool/result",
        payload: { id: call, name: "Read", content: `line ${turn}`, is_error: false },
      },
      ...Array.from({ length: chunks }, (_, i) => ({
        type: "assistant/chunk",
        payload: { kind: "text", text: `part ${i} ` },
      })),
      {
        type: "assistant/message",
        payload: { parts: [{ type: "text", text: `Answer ${from}.${turn}` }] },
      },
      {
        type: "step/end",
        payload: { usage: { input_tokens: 10, output_tokens: 5 }, finish_reason: "stop" },
      },
    ];
    for (const input of batch) {
      if (seq >= upTo) break;
      await sessions.append(id, input);
      seq++;
    }
  }
}

Deno.test({
  name:
    "a 10,000-event session opens to its last screen with a bounded DOM, and stays bounded while 1,000 more stream in",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "terret-console-" });
    await using stack = await mountAt(scriptedAdapter([]), `${dir}/s.db`, 0);
    const port = stack.ctx.get(WsServiceKey).port;
    await stack.sessions.create({ session_id: "long" });
    await seedTurns(stack.sessions, "long", (await stack.sessions.read("long")).length, 10_000);
    const browser = await launch();
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Performance.enable");
    /** JS heap used (after a collection) and DOM nodes: the CDP figures and the document's own element count. */
    const measure = async (): Promise<{ heap: number; nodes: number; elements: number }> => {
      await cdp.send("HeapProfiler.collectGarbage");
      const { metrics } = await cdp.send("Performance.getMetrics");
      const metric = (name: string): number => metrics.find((m) => m.name === name)?.value ?? NaN;
      return {
        heap: metric("JSHeapUsedSize"),
        nodes: metric("Nodes"),
        elements: await page.evaluate<number>("document.getElementsByTagName('*').length"),
      };
    };
    try {
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.fill("#token", TOKEN);
      await page.click("#login-form button[type=submit]");
      await until(page, "document.querySelector('tr[data-agent-id=long]') !== null", "the list");
      const cold = await plainRead(port); // hydrates the agent, so the timings below find it resident
      // The baselines, before the page opens the agent: a later connection to it would supersede the page's (4009),
      // and the page's reconnect would then supersede the baseline's.
      // A plain protocol client reading the same replay to its last event (the agent is resident).
      const plain = await plainRead(port);
      const bare = await browserRead(page);
      const started = performance.now();
      await page.click("tr[data-agent-id=long]");
      await until(page, visible(10_000), "the last event on the last screen");
      const elapsed = performance.now() - started;
      const rows = await page.locator("#lines .line").count();
      assert.ok(rows > 10 && rows < 300, `${rows} lines in the DOM for 10,000 events`);
      const seqs = await domSeqs(page);
      assert.deepStrictEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), "no line twice");
      assert.equal(seqs.at(-1), 10_000);
      // deno-lint-ignore no-console
      console.log(
        `console: a 10,000-event session opened to its last screen in ${elapsed.toFixed(0)} ms ` +
          `(${rows} lines in the DOM; the first plain read, hydrating the agent, took ${
            cold.toFixed(0)
          } ms; ` +
          `a plain protocol client read the same replay in ${plain.toFixed(0)} ms: ` +
          `${(elapsed / plain).toFixed(2)}x; a bare WebSocket in the same page read it in ${
            bare.toFixed(0)
          } ms: ` +
          `${(elapsed / bare).toFixed(2)}x)`,
      );

      // 1,000 more events stream in live (answers streamed as chunks): the DOM stays bounded and follows the bottom.
      const before = await measure();
      await seedTurns(stack.sessions, "long", 10_000, 11_000, 4);
      await until(page, visible(11_000), "the 11,000th event on the last screen");
      const after = await measure();
      // deno-lint-ignore no-console
      console.log(
        `console: 1,000 live events: JS heap ${(before.heap / 1e6).toFixed(1)} -> ` +
          `${
            (after.heap / 1e6).toFixed(1)
          } MB, DOM nodes (CDP) ${before.nodes} -> ${after.nodes}, ` +
          `elements ${before.elements} -> ${after.elements}`,
      );
      assert.ok(
        after.elements < 2 * before.elements,
        `elements ${before.elements} -> ${after.elements}`,
      );
      assert.ok(after.nodes < 2 * before.nodes, `DOM nodes ${before.nodes} -> ${after.nodes}`);
      const streamed = await page.locator(".line.assistant .text").last().textContent();
      assert.match(streamed ?? "", /^Answer 10000\.\d+$/, "the chunks' line ends as the answer");

      // Scrolled to the top, the first lines render in place of the last; a live event no longer pulls the view
      // down.
      await page.evaluate("document.querySelector('#lines').scrollTop = 0");
      await until(page, visible(1), "the first line after scrolling to the top");
      assert.ok((await page.locator("#lines .line").count()) < 300);
      await stack.sessions.append("long", { type: "user/message", payload: { content: "late" } });
      await until(
        page,
        "document.querySelector('#seq').textContent === 'seq 11001'",
        "the live event",
      );
      assert.ok(await page.evaluate<boolean>(visible(1)), "the view stays at the top");
      assert.equal(await page.locator('#lines .line[data-seq="11001"]').count(), 0);
    } finally {
      await context.close();
      await browser.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "the console's assets carry the CSP, nosniff and a strong ETag, and a matching If-None-Match gets 304",
  async fn() {
    await using stack = await createAgentStack({});
    stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS, console: true }, {
      id: "interfaces.ws",
    });
    await stack.ctx.idle();
    const base = `http://127.0.0.1:${stack.ctx.get(WsServiceKey).port}`;
    const page = await fetch(`${base}/`);
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(html, /<script type="module" src="\/console\/app.js"><\/script>/);
    assert.doesNotMatch(html, /<script>/, "no inline script");
    const script = await fetch(`${base}/console/app.js`);
    await script.body?.cancel();
    const etag = script.headers.get("etag") ?? "";
    assert.match(etag, /^"[0-9a-f]{32}"$/);
    assert.match(script.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    assert.equal(script.headers.get("x-content-type-options"), "nosniff");
    const again = await fetch(`${base}/console/app.js`, { headers: { "if-none-match": etag } });
    await again.body?.cancel();
    assert.equal(again.status, 304);
    // The script is a module: the modules it imports are served beside it, as JavaScript.
    const imported = await fetch(`${base}/console/transcript.js`);
    assert.equal(imported.status, 200);
    assert.match(imported.headers.get("content-type") ?? "", /^text\/javascript/);
    assert.match(await imported.text(), /export class Transcript/);
    const missing = await fetch(`${base}/console/nope.js`);
    assert.equal(missing.status, 404);
    assert.equal(await missing.text(), "not found");
    // The API routes are untouched.
    const agents = await fetch(`${base}/v1/agents`);
    assert.equal(agents.status, 401);
    await agents.body?.cancel();
  },
});

Deno.test({
  name: "without the console key, / is not found",
  async fn() {
    await using stack = await createAgentStack({});
    stack.ctx.plugin(WsInterface, { port: 0, tokens: TOKENS }, { id: "interfaces.ws" });
    await stack.ctx.idle();
    const response = await fetch(`http://127.0.0.1:${stack.ctx.get(WsServiceKey).port}/`);
    assert.equal(response.status, 404);
    await response.body?.cancel();
  },
});
