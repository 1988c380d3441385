// deno-lint-ignore-file no-console
/**
 * The standard tools' costs: Grep through ripgrep against the TypeScript search on one generated corpus (same
 * results, see `exec/tools/grep_tool_test.ts`), a 10,000-line Read, a WebFetch of a local page over the pinned
 * HTTP/1.1 client, and what the redaction row adds to one append. Prints medians (and their ratios).
 *
 * Run: deno run -A bench/std_tools.ts [--quick]
 *
 * @module
 */
import { createContext, Loader } from "@terret/hames";
import {
  memoryStorePlugin,
  redactionPlugin,
  SessionsKey,
  sessionsPlugin,
  ToolAllowList,
  ToolRegistry,
  ToolsKey,
} from "@terret/core";
import { createStdToolsPlugin } from "@terret/exec/tools";
import {
  fsPlugin,
  noneSandboxPlugin,
  shellPlugin,
  subprocessPlugin,
  terminalsPlugin,
  workspacePlugin,
} from "@terret/exec";

const quick = Deno.args.includes("--quick");
const FILES = quick ? 300 : 2_000;
const ROUNDS = quick ? 3 : 7;

async function median(n: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "terret-bench-tools-" }));
const line = (i: number) =>
  `const value_${i} = compute(${i}); // ${i % 97 === 0 ? "TODO tune" : "steady"}\n`;
for (let f = 0; f < FILES; f++) {
  const sub = `${dir}/pkg${f % 40}`;
  await Deno.mkdir(sub, { recursive: true });
  await Deno.writeTextFile(
    `${sub}/file${f}.ts`,
    Array.from({ length: 200 }, (_, i) => line(i + f)).join(""),
  );
}
await Deno.writeTextFile(
  `${dir}/big.txt`,
  Array.from({ length: 10_000 }, (_, i) => line(i)).join(""),
);

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  () =>
    new Response(
      `<html><head><title>t</title></head><body>${
        "<p>para <a href='/x'>link</a></p>".repeat(200)
      }</body></html>`,
      {
        headers: { "content-type": "text/html" },
      },
    ),
);

const ctx = createContext({ mode: "production" });
const loader = new Loader(ctx);
const hooks = {
  webFetch: {
    resolve: () => Promise.resolve(["93.184.216.34"]),
    connect: (_a: string, _p: number, signal: AbortSignal) =>
      Deno.connect({ hostname: "127.0.0.1", port: server.addr.port, signal }),
  },
};
await loader.load([
  { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
  { id: "sessions", plugin: sessionsPlugin, config: {} },
  { id: "tools", plugin: ToolRegistry, config: {} },
  { id: "tools.allow", plugin: ToolAllowList, config: { allow: ["*"] } },
  { id: "workspace", plugin: workspacePlugin, config: { dirs: [dir] } },
  { id: "fs", plugin: fsPlugin, config: {} },
  { id: "sandbox", plugin: noneSandboxPlugin, config: { acknowledge_unsandboxed: true } },
  { id: "subprocess", plugin: subprocessPlugin, config: {} },
  { id: "shell", plugin: shellPlugin, config: {} },
  { id: "terminals", plugin: terminalsPlugin, config: {} },
  {
    id: "tools.std",
    plugin: createStdToolsPlugin(hooks),
    config: { web_fetch: { allow_domains: ["bench.example"] } },
  },
]);
const sessions = ctx.get(SessionsKey);
await sessions.create({ session_id: "s1" });
const tools = ctx.get(ToolsKey);
let id = 0;
const call = (name: string, args: Record<string, unknown>) =>
  tools.execute({ id: `c${++id}`, name, args }, { ctx, session_id: "s1", agent_id: "bench" });

const hasRg =
  (await new Deno.Command("rg", { args: ["--version"], stdout: "null" }).output().catch(() => null))
    ?.success ?? false;
console.log(`corpus: ${FILES} files × 200 lines; median of ${ROUNDS}`);
const query = { pattern: "TODO tune", path: dir, output_mode: "count" };
const tsMs = await median(ROUNDS, async () => {
  await loader.reconfigure("tools.std", {
    grep: { ripgrep: "never" },
    web_fetch: { allow_domains: ["bench.example"] },
  });
  return call("Grep", query);
});
const rgMs = hasRg
  ? await median(ROUNDS, async () => {
    await loader.reconfigure("tools.std", {
      grep: { ripgrep: "auto" },
      web_fetch: { allow_domains: ["bench.example"] },
    });
    return call("Grep", query);
  })
  : NaN;
console.log(
  `Grep count, TypeScript search          ${
    tsMs.toFixed(1).padStart(8)
  } ms (includes remounting the row)`,
);
console.log(
  hasRg
    ? `Grep count, ripgrep via subprocess seam  ${
      rgMs.toFixed(1).padStart(8)
    } ms   TypeScript/ripgrep ${(tsMs / rgMs).toFixed(1)}×`
    : "Grep count, ripgrep: skipped (no rg on PATH)",
);
const readMs = await median(
  ROUNDS * 3,
  () => call("Read", { file_path: `${dir}/big.txt`, allow_large: true }),
);
console.log(`Read of 10,000 lines (cat -n)            ${readMs.toFixed(2).padStart(8)} ms`);
const fetchMs = await median(
  ROUNDS * 3,
  () => call("WebFetch", { url: "http://bench.example/page", prompt: "p" }),
);
console.log(`WebFetch of a local 7 KB page (pinned)   ${fetchMs.toFixed(2).padStart(8)} ms`);

const payload = {
  content: `a normal user message of moderate length ${"word ".repeat(80)} sk-or-v1-${
    "a".repeat(40)
  }`,
};
const APPENDS = quick ? 2_000 : 10_000;
// The same log with the redaction row mounted, in its own context; rounds alternate between the two.
const redCtx = createContext({ mode: "production" });
await new Loader(redCtx).load([
  { id: "sessions.store", plugin: memoryStorePlugin, config: {} },
  { id: "sessions", plugin: sessionsPlugin, config: {} },
  { id: "redaction", plugin: redactionPlugin, config: {} },
]);
const redSessions = redCtx.get(SessionsKey);
await redSessions.create({ session_id: "s1" });
const appends = async (log: typeof sessions): Promise<number> => {
  const start = performance.now();
  for (let i = 0; i < APPENDS; i++) await log.append("s1", { type: "user/message", payload });
  return performance.now() - start;
};
await appends(sessions);
await appends(redSessions);
const plainMs: number[] = [];
const redactedMs: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    plainMs.push(await appends(sessions));
    redactedMs.push(await appends(redSessions));
  } else {
    redactedMs.push(await appends(redSessions));
    plainMs.push(await appends(sessions));
  }
}
const mid = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const perRound = redactedMs.map((value, round) => value / plainMs[round]!);
console.log(
  `append, no scrubber                      ${
    ((mid(plainMs) / APPENDS) * 1000).toFixed(1).padStart(8)
  } µs\n` +
    `append, redaction row (7 patterns)       ${
      ((mid(redactedMs) / APPENDS) * 1000).toFixed(1).padStart(8)
    } µs   ratio ${mid(perRound).toFixed(2)}× (median of ${ROUNDS} paired rounds)`,
);
await redCtx.dispose();
await ctx.dispose();
await server.shutdown();
await Deno.remove(dir, { recursive: true });
