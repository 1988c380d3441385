/**
 * The web console against a real `trt serve` process whose model is the fake OpenRouter server (real HTTP, real SSE
 * bytes): a reply streams into the page over several renders, a Read call shows its result, model HTML stays text,
 * an Edit waits on an approval answered from its pinned card (and renders as a diff), and a turn the model holds is
 * cancelled from the page, closing the model's HTTP stream. Screenshots of the list, the approval and the diff are
 * saved (to `docs/` with `UPDATE_SCREENSHOTS=1`).
 */
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.56.1";
import {
  chunk,
  fakeOpenRouter,
  sse,
  sseResponse,
  textTurn,
  toolCallTurn,
} from "@terret/core/testing";
import { serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { TOKEN } from "../ws/_harness.ts";
import { chromiumMissing, launch, openById, signIn, until } from "./_browser.ts";

const ignore = (await chromiumMissing()) !== undefined;
const XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

/** The sizes of an SSE transcript's events, so each is its own write. */
function eventSizes(transcript: string): number[] {
  return transcript.split(/(?<=\n\n)/).map((event) => new TextEncoder().encode(event).length);
}

/** Saves a screenshot of `page` as `name` under `dir`, and under docs/ too with UPDATE_SCREENSHOTS=1. */
async function shoot(page: Page, dir: string, name: string): Promise<void> {
  await page.screenshot({ path: `${dir}/${name}` });
  if (Deno.env.get("UPDATE_SCREENSHOTS") === "1") {
    await page.screenshot({ path: fileURLToPath(new URL(`../../docs/${name}`, import.meta.url)) });
  }
}

Deno.test({
  name:
    "the console of trt serve with the fake OpenRouter streams, shows a tool result and model HTML as text, answers an approval and cancels",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using model = await fakeOpenRouter();
    await using tree = await writeTree({ "work/notes.txt": "alpha\nbeta\ngamma\n" });
    const notes = tree.path("work/notes.txt");
    const shots = await Deno.makeTempDir({ prefix: "terret-console-shots-" });
    await Deno.writeTextFile(
      tree.path("serve.yml"),
      [
        "rows:",
        "  - id: workspace",
        `    config: { dirs: [${tree.path("work")}] }`,
        "  - id: sandbox",
        "    plugin: sandbox-none",
        "    config: { acknowledge_unsandboxed: true }",
        "  - id: llm.main",
        `    config: { model: test/model, base_url: ${model.url}, api_key: sk-test, max_retries: 0 }`,
        "  - id: tools.allow",
        "    config: { allow: [Read, Edit] }",
        "  - id: titles",
        "    config: { auto: false }",
        "  - id: interfaces.ws",
        `    config: { port: 0, tokens: [{ token: ${TOKEN}, agents: ["*"] }], console: true }`,
        "",
      ].join("\n"),
    );
    // Pieces longer than the redaction row's stream window (64 characters held back while a secret may form).
    const pieces = [1, 2, 3, 4].map((n) =>
      `Piece ${n} of the streamed answer, long enough to pass the stream window. `
    );
    const answer = pieces.join("");
    const streamed = textTurn(pieces);
    model.script(
      { ...sseResponse(streamed), chunks: eventSizes(streamed), delayMs: 300 },
      sseResponse(toolCallTurn([{ id: "call_read", name: "Read", args: { file_path: notes } }])),
      sseResponse(textTurn(XSS)),
      sseResponse(toolCallTurn([{
        id: "call_edit",
        name: "Edit",
        args: { file_path: notes, old_string: "beta\n", new_string: "BETA\ndelta\n" },
      }])),
      sseResponse(textTurn("Edited.")),
      {
        ...sseResponse(
          sse(
            ": OPENROUTER PROCESSING",
            chunk({ role: "assistant", content: "Let me think about this slowly. ".repeat(4) }),
          ),
        ),
        end: "hold",
      },
    );
    const served = await serve(tree.dir, [tree.path("serve.yml")]);
    const browser = await launch();
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    // Every URL the page asks for (requests and WebSockets): none may carry the token.
    const urls: string[] = [];
    page.on("request", (request) => urls.push(request.url()));
    page.on("websocket", (socket) => urls.push(socket.url()));
    const send = async (text: string): Promise<void> => {
      await page.fill("#message", text);
      await page.click("#send-form button[type=submit]");
    };
    const completed = (count: number): string =>
      `document.querySelectorAll('.line.turn-end.status-completed').length === ${count}`;
    try {
      await signIn(page, served.port, TOKEN);
      await openById(page, "demo");

      // Every distinct text the streaming line shows is recorded as the page renders it.
      await page.evaluate(`(() => {
        window.__renders = [];
        new MutationObserver(() => {
          const text = document.querySelector('.line.assistant.streaming .text')?.textContent;
          if (text !== undefined && window.__renders.at(-1) !== text) window.__renders.push(text);
        }).observe(document.querySelector('#rows'), { childList: true, subtree: true, characterData: true });
      })()`);
      await send("Stream please");
      await until(page, completed(1), "the streamed turn");
      const renders = await page.evaluate<string[]>("window.__renders");
      const intermediate = renders.filter((text) => text !== answer);
      assert.ok(intermediate.length > 1, `intermediate renders: ${JSON.stringify(renders)}`);
      for (const text of intermediate) {
        assert.ok(answer.startsWith(text), text);
      }
      assert.deepStrictEqual(await page.locator(".line.assistant .text").allTextContents(), [
        answer,
      ]);

      // A Read call with its result (collapsed), then model HTML that stays text.
      await send("Read the notes");
      await until(page, completed(2), "the Read turn");
      const tool = page.locator(".line.tool").last();
      assert.match((await tool.textContent()) ?? "", /tool Read/);
      assert.equal(await tool.locator("details.result").getAttribute("open"), null);
      assert.equal(await tool.locator("details.result.error").count(), 0);
      await tool.locator("details.result summary").click();
      assert.match((await tool.locator("details.result pre").textContent()) ?? "", /beta/);
      assert.ok((await page.locator(".line.assistant .text").allTextContents()).includes(XSS));
      assert.equal(await page.locator("#lines img, #lines script").count(), 0);
      assert.equal(await page.evaluate("window.__pwned"), undefined);

      // An Edit waits on its approval, pinned on top; allowed from the card, it runs and shows as a diff.
      await send("Edit the notes");
      await until(page, "document.querySelector('.approval-card') !== null", "the pinned approval");
      assert.match((await page.locator(".approval-card").textContent()) ?? "", /Approve Edit\?/);
      assert.equal(
        await Deno.readTextFile(notes),
        "alpha\nbeta\ngamma\n",
        "nothing ran before the answer",
      );
      await shoot(page, shots, "console_approval.png");
      await page.click(".approval-card button.allow");
      await until(page, completed(3), "the Edit turn");
      assert.equal(await page.locator(".approval-card").count(), 0);
      assert.equal(await Deno.readTextFile(notes), "alpha\nBETA\ndelta\ngamma\n");
      const diff = await page.locator(".diff").last().evaluate((node) =>
        [...node.children].map((row) => `${row.className}|${row.textContent}`)
      );
      assert.deepStrictEqual(diff, [
        `diff-file|${notes}`,
        "del|- beta",
        "add|+ BETA",
        "add|+ delta",
        "ctx|  ",
      ]);
      assert.match((await page.locator("#lines").textContent()) ?? "", /approval allow/);
      await shoot(page, shots, "console_diff.png");

      // A turn the model holds mid-reply is cancelled from the page: the model's HTTP stream is closed.
      await send("Take your time");
      await until(
        page,
        "document.querySelector('.line.assistant.streaming') !== null",
        "the held reply",
      );
      await page.click("#cancel");
      await until(
        page,
        "document.querySelector('.line.turn-end.status-cancelled') !== null",
        "the cancel",
      );
      assert.equal(await model.exchanges[5]!.ended, "client_closed");
      assert.equal(model.requests.length, 6);

      await page.click("#back");
      await until(page, "document.querySelector('tr[data-agent-id=demo]') !== null", "the list");
      // The token is in no URL or request line the page sent, and is kept only in sessionStorage.
      assert.ok(urls.some((url) => url.endsWith("/v1/agents/demo/stream")), urls.join("\n"));
      assert.deepStrictEqual(urls.filter((url) => url.includes(TOKEN)), []);
      assert.equal(await page.evaluate("JSON.stringify(localStorage)"), "{}");
      assert.equal(await page.evaluate("sessionStorage.getItem('terret.console.token')"), TOKEN);
      await shoot(page, shots, "console_list.png");
      // deno-lint-ignore no-console
      console.log(`console: screenshots in ${shots}`);
    } finally {
      await browser.close();
      await served.stop();
    }
  },
});
