/**
 * What the console's browser tests share: the chromium lane (skipped loudly locally, failing in CI), a wait on a
 * page predicate with a deadline, and signing in and opening an agent.
 *
 * @module
 */
import { chromium } from "npm:playwright-core@1.56.1";
import type { Browser, Page } from "npm:playwright-core@1.56.1";
import { skipLane } from "../lane.ts";

/** Debian's chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Why the lane cannot run here (pass to a test's `ignore`), or undefined when chromium starts. */
export async function chromiumMissing(): Promise<string | undefined> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    return skipLane("chromium", `${CHROMIUM} is missing (apt-get install -y chromium)`);
  }
  try {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    await browser.close();
    return undefined;
  } catch (error) {
    return skipLane("chromium", `chromium cannot start: ${(error as Error).message}`);
  }
}

/** Starts chromium. */
export async function launch(): Promise<Browser> {
  return await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

/**
 * Resolves once `predicate` holds in the page, polled with `page.evaluate` (DevTools evaluation, which the page's
 * CSP does not block) until a 30 s deadline.
 */
export async function until(page: Page, predicate: string, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await page.evaluate<boolean>(`Boolean(${predicate})`))) {
    if (Date.now() > deadline) {
      const state = await page.evaluate<string>(
        "['#conn', '#seq', '#banner', '#lines'].map((id) => document.querySelector(id)?.textContent.slice(-600)).join('\\n')",
      ).catch(() => "");
      throw new Error(`${what} did not happen within 30 s\n${state}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Signs in with `token` on the console at `port` and waits for the agents list. */
export async function signIn(page: Page, port: number, token: string): Promise<void> {
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.fill("#token", token);
  await page.click("#login-form button[type=submit]");
  await until(page, "!document.querySelector('#agents').hidden", "the agents view");
}

/** Opens agent `agentId` by id from the agents view and waits for its live stream. */
export async function openById(page: Page, agentId: string): Promise<void> {
  await page.fill("#open-id", agentId);
  await page.click("#open-form button[type=submit]");
  await until(page, "document.querySelector('#conn').className.includes('ok')", "the stream");
}

/** The seqs of the transcript lines in the DOM, in document order. */
export async function domSeqs(page: Page): Promise<number[]> {
  return await page.evaluate<number[]>(
    "[...document.querySelectorAll('#lines .line[data-seq]')].map((n) => Number(n.dataset.seq))",
  );
}
