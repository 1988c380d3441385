/**
 * The web console against a real `trt serve` process (the recorded plain-text turn through the replay middleware,
 * so no model request leaves the machine): the page served by the process signs in with the generated token, a
 * message gets its recorded answer, and after the process is stopped and started again on the same port the page
 * reconnects by itself and shows every event once.
 */
import assert from "node:assert/strict";
import { replayedServePatch, serve } from "../ws/_serve.ts";
import { writeTree } from "../fixtures/composition/tree.ts";
import { stablePort } from "../ports.ts";
import { chromiumMissing, launch, until } from "./_browser.ts";

const missing = await chromiumMissing();

Deno.test({
  name:
    "the console of a real trt serve answers a message, then reconnects across a restart of the process",
  ignore: missing !== undefined,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // The process comes back on the same port: one no parallel test's socket is handed in between.
    const port = stablePort();
    await using tree = await writeTree({
      "serve.yml": replayedServePatch(
        `{ port: ${port}, token_file: ws/token, dir: !setting terret.home, console: true }`,
      ),
    });
    let served = await serve(tree.dir, [tree.path("serve.yml")]);
    assert.ok(
      served.lines.includes(
        `trt serve: the web console is at http://127.0.0.1:${port}/ (sign in with a socket token; docs/console.md)`,
      ),
    );
    const token = (await Deno.readTextFile(tree.path("ws/token"))).trim();
    const browser = await launch();
    const page = await browser.newPage();
    try {
      const response = await page.goto(`http://127.0.0.1:${port}/`);
      assert.match(
        (await response!.allHeaders())["content-security-policy"] ?? "",
        /script-src 'self'/,
      );
      await page.fill("#token", token);
      await page.click("#login-form button[type=submit]");
      await until(page, "!document.querySelector('#agents').hidden", "the agents view");
      await page.fill("#open-id", "demo");
      await page.click("#open-form button[type=submit]");
      await until(page, "document.querySelector('#conn').className.includes('ok')", "the stream");
      await page.fill("#message", "Say hello in five words.");
      await page.click("#send-form button[type=submit]");
      await until(
        page,
        "document.querySelector('.line.turn-end.status-completed') !== null",
        "the recorded turn",
      );
      const answer = await page.locator(".line.assistant .text").allTextContents();
      assert.equal(answer.length, 1);
      assert.ok(answer[0]!.length > 0);
      const before = await page.evaluate<number[]>(
        "[...document.querySelectorAll('#lines .line[data-seq]')].map((n) => Number(n.dataset.seq))",
      );

      await served.stop();
      await until(page, "document.querySelector('#conn').className.includes('bad')", "the drop");
      served = await serve(tree.dir, [tree.path("serve.yml")]);
      await until(
        page,
        "document.querySelector('#conn').className.includes('ok')",
        "the reconnect",
      );
      await until(
        page,
        "document.querySelector('#lines').textContent.includes('reconnecting from seq')",
        "the visible drop",
      );
      const after = await page.evaluate<number[]>(
        "[...document.querySelectorAll('#lines .line[data-seq]')].map((n) => Number(n.dataset.seq))",
      );
      assert.deepStrictEqual(after, before, "the same lines, none twice");
      assert.deepStrictEqual(await page.locator(".line.user .text").allTextContents(), [
        "Say hello in five words.",
      ]);
    } finally {
      await browser.close();
      await served.stop();
    }
  },
});
