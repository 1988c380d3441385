// deno-lint-ignore-file no-console
/**
 * The web console opening a 10,000-event session, in Debian's chromium driven over a bare DevTools connection (only
 * `Page` and `Runtime`: no `Network` domain, so no per-frame DevTools traffic, unlike a Playwright-driven page),
 * against the real socket server over a real SQLite file.
 *
 * Per round, in rotated order: the console (a click on the agent's row to its last line visible on the last screen,
 * timed inside the page) and the baseline, a bare WebSocket in the same page that reads the same replay to its last
 * event without parsing or rendering (the browser's floor for the same work). Printed: each side's median and the
 * median of the per-round ratios.
 *
 * Run: deno run -A --lock=bench/deno.lock bench/console_open.ts [--quick]
 *
 * @module
 */
import { createAgentStack, scriptedAdapter } from "@terret/core/testing";
import { WsInterface, WsServiceKey } from "@terret/ws";
import { median } from "./_measure.ts";

const CHROMIUM = "/usr/bin/chromium";
const ROUNDS = Deno.args.includes("--quick") ? 3 : 7;
const EVENTS = 10_000;
const TOKEN = "bench-console-token-0123456789";

try {
  await Deno.stat(CHROMIUM);
} catch {
  console.log(`console_open: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)`);
  Deno.exit(0);
}

const dir = await Deno.makeTempDir({ prefix: "terret-console-bench-" });
await using stack = await createAgentStack({
  adapter: scriptedAdapter([]),
  sqlitePath: `${dir}/sessions.db`,
});
stack.ctx.plugin(
  WsInterface,
  { port: 0, tokens: [{ token: TOKEN, agents: ["*"] }], console: true },
  { id: "interfaces.ws" },
);
await stack.ctx.idle();
const port = stack.ctx.get(WsServiceKey).port;
await stack.sessions.create({ session_id: "long" });
for (let turn = 0, seq = 1; seq < EVENTS; turn++) {
  const inputs = [
    { type: "user/message", payload: { content: `Question ${turn}` } },
    {
      type: "tool/call",
      payload: { id: `c${turn}`, name: "Read", args: { file_path: `/ws/f${turn}` } },
    },
    {
      type: "tool/result",
      payload: { id: `c${turn}`, name: "Read", content: `line ${turn}`, is_error: false },
    },
    { type: "assistant/message", payload: { parts: [{ type: "text", text: `Answer ${turn}` }] } },
    {
      type: "step/end",
      payload: { usage: { input_tokens: 10, output_tokens: 5 }, finish_reason: "stop" },
    },
  ];
  for (const input of inputs) {
    if (seq >= EVENTS) break;
    await stack.sessions.append("long", input);
    seq++;
  }
}

const browser = new Deno.Command(CHROMIUM, {
  args: [
    "--headless=new",
    "--no-sandbox",
    "--remote-debugging-port=0",
    `--user-data-dir=${dir}/profile`,
    "about:blank",
  ],
  stdout: "null",
  stderr: "piped",
}).spawn();
/** The DevTools port chromium prints on stderr once it listens. */
async function devtoolsPort(): Promise<number> {
  let text = "";
  for await (const piece of browser.stderr.pipeThrough(new TextDecoderStream())) {
    text += piece;
    const found = text.match(/DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//);
    if (found !== null) return Number(found[1]);
  }
  throw new Error(`chromium exited before listening: ${text}`);
}

/** A bare DevTools session on the first page target. */
class Cdp {
  #id = 0;
  readonly #waiting = new Map<number, (frame: { result?: unknown; error?: unknown }) => void>();
  readonly #events = new Map<string, () => void>();
  private constructor(readonly socket: WebSocket) {
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (typeof frame.id === "number") this.#waiting.get(frame.id)?.(frame);
      else this.#events.get(frame.method)?.();
    };
  }
  static async open(port: number): Promise<Cdp> {
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
      type: string;
      webSocketDebuggerUrl: string;
    }[];
    const page = targets.find((target) => target.type === "page")!;
    const socket = new WebSocket(page.webSocketDebuggerUrl);
    await new Promise((resolve) => socket.onopen = resolve);
    return new Cdp(socket);
  }
  send(method: string, params: Record<string, unknown> = {}): Promise<{ result?: unknown }> {
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, (frame) => {
        this.#waiting.delete(id);
        if (frame.error !== undefined) {
          reject(new Error(`${method}: ${JSON.stringify(frame.error)}`));
        } else resolve(frame);
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
  /** Resolves on the next `method` event. */
  next(method: string): Promise<void> {
    return new Promise((resolve) => this.#events.set(method, resolve));
  }
  /** Evaluates `expression` in the page, awaiting a promise, and returns its value. */
  async evaluate<T>(expression: string): Promise<T> {
    const frame = await this.send("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    }) as { result: { result: { value: T }; exceptionDetails?: unknown } };
    if (frame.result.exceptionDetails !== undefined) {
      throw new Error(`evaluation failed: ${JSON.stringify(frame.result.exceptionDetails)}`);
    }
    return frame.result.result.value;
  }
  /** Loads the console page and waits for its load event. */
  async load(): Promise<void> {
    const loaded = this.next("Page.loadEventFired");
    await this.send("Page.navigate", { url: `http://127.0.0.1:${port}/` });
    await loaded;
  }
}

const BARE = `new Promise((resolve, reject) => {
  const started = performance.now();
  let frames = 0;
  const socket = new WebSocket("ws://" + location.host + "/v1/agents/long/stream", ["terret.v1", "bearer.${TOKEN}"]);
  socket.onerror = () => reject(new Error("the bare socket failed"));
  socket.onmessage = () => {
    frames++;
    if (frames === 1) socket.send('{"type":"subscribe","from_seq":1}');
    if (frames === ${EVENTS + 1}) { socket.close(); resolve(performance.now() - started); }
  };
})`;
const CONSOLE = `new Promise((resolve) => {
  const listed = () => {
    const row = document.querySelector("tr[data-agent-id=long]");
    if (row === null) return requestAnimationFrame(listed);
    const started = performance.now();
    row.click();
    const shown = () => {
      const line = document.querySelector('#lines .line[data-seq="${EVENTS}"]');
      if (line !== null) {
        const box = document.querySelector("#lines").getBoundingClientRect();
        const rect = line.getBoundingClientRect();
        if (rect.height > 0 && rect.bottom <= box.bottom + 1) return resolve(performance.now() - started);
      }
      requestAnimationFrame(shown);
    };
    shown();
  };
  listed();
})`;

try {
  const cdp = await Cdp.open(await devtoolsPort());
  await cdp.send("Page.enable");
  await cdp.load();
  await cdp.evaluate(`sessionStorage.setItem("terret.console.token", ${JSON.stringify(TOKEN)})`);
  await cdp.evaluate(BARE); // hydrates the agent, so every timed read finds it resident
  const cases: { name: string; run: () => Promise<number> }[] = [
    {
      name: "console",
      run: async () => {
        await cdp.load();
        return await cdp.evaluate<number>(CONSOLE);
      },
    },
    {
      name: "bare socket",
      run: async () => {
        await cdp.load();
        return await cdp.evaluate<number>(BARE);
      },
    },
  ];
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!;
      times.get(c.name)!.push(await c.run());
    }
  }
  const page = times.get("console")!;
  const bare = times.get("bare socket")!;
  const ratio = median(page.map((value, round) => value / bare[round]!));
  console.log(
    `console_open: ${EVENTS} events to the last screen: console median ${
      median(page).toFixed(0)
    } ms, ` +
      `bare WebSocket median ${median(bare).toFixed(0)} ms, ratio ${ratio.toFixed(2)}x ` +
      `(${ROUNDS} paired rounds, order rotated)`,
  );
  cdp.socket.close();
} finally {
  browser.kill();
  await browser.status;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
