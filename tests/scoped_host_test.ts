/**
 * The least-privilege host, end to end: `trt serve --scoped` re-runs itself under exactly the flags
 * `trt permissions` prints (plus `--no-prompt`); a plugin doing its declared work succeeds, and the same plugin
 * reaching for `/etc/passwd` or an unlisted host gets `Deno.errors.NotCapable`.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runTrt, type TrtIo } from "@terret/cli";
import { writeTree } from "./fixtures/composition/tree.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const MAIN = new URL("../interfaces/cli/main.ts", import.meta.url).href;
const PROBE_BUNDLE = fileURLToPath(
  new URL("./fixtures/composition/bundles/probe.yml", import.meta.url),
);

/** Captured output, with a way to wait (with a deadline that fails the test) until stdout contains a text. */
function capture(signal?: AbortSignal): TrtIo & {
  out: string[];
  err: string[];
  until(text: string, deadlineMs: number): Promise<void>;
} {
  const out: string[] = [];
  const err: string[] = [];
  const waiters: { text: string; resolve: () => void }[] = [];
  const check = (): void => {
    const all = out.join("");
    for (const waiter of waiters.filter((w) => all.includes(w.text))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  return {
    out,
    err,
    stdout: (text) => {
      out.push(text);
      check();
    },
    stderr: (text) => void err.push(text),
    env: { get: (name) => Deno.env.get(name) },
    cwd: ROOT,
    ...(signal === undefined ? {} : { signal }),
    until(text, deadlineMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const reached = new Promise<void>((resolve) => {
        waiters.push({ text, resolve });
        check();
      });
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`"${text}" not seen within ${deadlineMs} ms; stderr: ${err.join("")}`),
            ),
          deadlineMs,
        );
      });
      return Promise.race([reached, deadline]).finally(() => clearTimeout(timer));
    },
  };
}

Deno.test("serve --scoped runs the profile under its permissions: declared work succeeds, the rest is NotCapable", async () => {
  await using tree = await writeTree({
    "allowed.txt": "granted",
    "home/profiles/probe/profile.yml": `bundles:\n  - ${PROBE_BUNDLE}\n`,
  });
  await using allowed = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("pong"),
  );
  await using unlisted = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("no"),
  );
  await Deno.writeTextFile(
    tree.path("home/patch.yml"),
    `rows:
  - id: probe
    plugin: probe
    config:
      report: ${tree.path("report.json")}
      allowed_file: ${tree.path("allowed.txt")}
      allowed_url: http://127.0.0.1:${allowed.addr.port}/
      forbidden_file: /etc/passwd
      forbidden_host: 127.0.0.1
      forbidden_port: ${unlisted.addr.port}
`,
  );
  const args = ["--home", tree.path("home"), "--profile", "probe", "--allow-config-code"];

  const printed = capture();
  assert.equal(await runTrt(["permissions", ...args], printed), 0);
  const flags = [
    `--allow-read=${
      [
        tree.path("allowed.txt"),
        tree.path("home/patch.yml"),
        tree.path("home/profiles/probe"),
        fileURLToPath(new URL("./fixtures/composition/bundles", import.meta.url)),
        fileURLToPath(new URL("./fixtures/composition/plugins", import.meta.url)),
        // trt serve's home lock.
        tree.path("home/serve.lock"),
      ].sort().join(",")
    }`,
    `--allow-write=${[tree.path("home/serve.lock"), tree.path("report.json")].sort().join(",")}`,
    `--allow-net=127.0.0.1:${allowed.addr.port}`,
    "--ignore-env=LOG_STREAM,LOG_TOKENS",
  ];
  assert.equal(printed.out.join(""), flags.map((flag) => `${flag}\n`).join(""));

  const stop = new AbortController();
  const io = capture(stop.signal);
  const exit = runTrt(["serve", "--scoped", ...args], io, {
    self: { execPath: Deno.execPath(), mainModule: MAIN },
  });
  await io.until("trt serve: running until SIGINT or SIGTERM\n", 60_000);
  const report = JSON.parse(await Deno.readTextFile(tree.path("report.json")));
  assert.deepStrictEqual(report, {
    allowed_file: "ok: granted",
    allowed_url: "ok: pong",
    forbidden_file:
      'NotCapable: Requires read access to "/etc/passwd", run again with the --allow-read flag',
    forbidden_host:
      `NotCapable: Requires net access to "127.0.0.1:${unlisted.addr.port}", run again with the --allow-net flag`,
  });
  stop.abort();
  assert.equal(await exit, 0);
  assert.equal(
    io.err.join(""),
    `trt serve: re-running under scoped permissions: ${flags.join(" ")} --no-prompt\n`,
  );
  assert.equal(
    io.out.join(""),
    [
      `trt serve: booted profile "probe" (${
        tree.path("home/profiles/probe/profile.yml")
      }): 1 of 1 rows mounted (probe)`,
      "trt serve: no interface row is mounted, so nothing is served (no interfaces.* row in the profile)",
      "trt serve: running until SIGINT or SIGTERM",
      "trt serve: stopped",
      "",
    ].join("\n"),
  );
});
