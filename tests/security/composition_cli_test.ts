/**
 * Issue 17 items 7, 8 and 9 through real `trt` processes: `dump-config` masks literal secrets with a marker and
 * their layer; a recursive alias, an alias bomb, a syntax error at the end of a file and a duplicate row id in one
 * patch are each one clear message with file, line and column, exit 2; a port in use names the address and the key.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { writeTree } from "../fixtures/composition/tree.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));

async function trt(
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: ROOT,
    env: { OPENROUTER_API_KEY: "", TERRET_TOKEN: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const output = await child.output().finally(() => clearTimeout(timer));
  if (output.signal === "SIGKILL") throw new Error(`trt ${args.join(" ")} did not exit`);
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test("trt dump-config masks a literal model key and socket tokens with a marker and their layer, keeps tags", async () => {
  await using tree = await writeTree({
    "secrets.yml": [
      "rows:",
      "  - id: llm.main",
      "    config: { model: m/x, api_key: sk-or-v1-literal-0123456789abcdef }",
      "  - id: interfaces.ws",
      "    config:",
      "      tokens: [{ token: literal-socket-token-0123456789, agents: ['*'] }]",
      "      token_env: TERRET_TOKEN",
      "  - id: credentials",
      "    config: { providers: { openrouter: { env: [KEY], value: config-value-0123 } } }",
      "  - id: llm.other",
      "    plugin: terret-llm-openrouter",
      "    after: llm.main",
      "    config: { role: subagent, model: m/y, api_key: !env OTHER_KEY }",
      "",
    ].join("\n"),
  });
  const out = await trt(["dump-config", "--home", tree.dir, "--patch", tree.path("secrets.yml")]);
  assert.equal(out.code, 0);
  for (const secret of ["sk-or-v1-literal", "literal-socket-token", "config-value-0123"]) {
    assert.equal(out.stdout.includes(secret), false, secret);
  }
  const at = (line: number) => `-SECRET- (set by --patch (${tree.path("secrets.yml")}:${line}))`;
  const lines = out.stdout.split("\n");
  assert.deepStrictEqual(
    lines.filter((line) => /api_key:|token:|value:/.test(line)).map((line) => line.trim()),
    [
      `value: ${at(8)}`,
      `api_key: ${at(2)}`,
      "api_key: !env OTHER_KEY",
      `- token: ${at(4)}`,
    ],
  );
  const help = await trt(["dump-config", "--help"]);
  assert.deepStrictEqual(help.stdout.split("\n").slice(4, 7), [
    "Tags are printed as written (`!env NAME`); no secret is resolved. A literal secret (a value the",
    "plugin's schema marks secret, or under a key named like one: api_key, token, password, …) is",
    "printed as -SECRET- with the layer that set it.",
  ]);
});

Deno.test("bad YAML and a duplicate row id in one patch: one message with file, line and column, exit 2", async () => {
  await using tree = await writeTree({
    "recursive.yml": "rows: []\nloop: &a [*a]\n",
    "bomb.yml": "rows: []\na: &a [x, y]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
    "syntax.yml": "rows:\n  - id: llm.main\n    config: { model: [m }\n",
    "twice.yml":
      "rows:\n  - id: llm.main\n    config: { model: a/b }\n  - id: llm.main\n    config: { model: c/d }\n",
  });
  const run = (file: string) =>
    trt(["dump-config", "--home", tree.dir, "--patch", tree.path(file)]);
  assert.deepStrictEqual(await run("recursive.yml"), {
    code: 2,
    stdout: "",
    stderr: `trt dump-config: Cannot read "${
      tree.path("recursive.yml")
    }": line 2, column 11: the alias "*a" is used inside its own anchor "&a" (a recursive alias)\n`,
  });
  assert.deepStrictEqual(await run("bomb.yml"), {
    code: 2,
    stdout: "",
    stderr: `trt dump-config: Cannot read "${
      tree.path("bomb.yml")
    }": line 3, column 8: too many aliases expand here (more than 100 per anchor: an alias bomb); write the values out\n`,
  });
  const syntax = await run("syntax.yml");
  assert.equal(syntax.code, 2);
  assert.match(
    syntax.stderr,
    new RegExp(
      `^trt dump-config: Cannot read "${
        tree.path("syntax.yml")
      }": line 3, column \\d+: [^\\n]+\\n$`,
    ),
  );
  assert.deepStrictEqual(await run("twice.yml"), {
    code: 2,
    stdout: "",
    stderr: `trt dump-config: Cannot read patch "${
      tree.path("twice.yml")
    }": line 4: row "llm.main" appears twice in this file (first at line 2); give each row id once per file\n`,
  });
});

Deno.test("trt serve on a port in use names the address and the port key", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    await using tree = await writeTree({
      "patch.yml":
        "rows:\n  - id: sandbox\n    config: { image: terret/sandbox:test, docker: /nonexistent/docker }\n" +
        `  - id: interfaces.ws\n    config: { port: ${port}, token_file: ws/token, dir: !setting terret.home }\n`,
    });
    const out = await trt(["serve", "--home", tree.dir, "--patch", tree.path("patch.yml")]);
    assert.equal(out.code, 1);
    assert.equal(
      out.stderr.split("\n").at(-2),
      `trt serve: Cannot boot: row "interfaces.ws" failed to start: Cannot listen on 127.0.0.1:${port}: the ` +
        `address is already in use (another server holds it; stop it, or set the row's "port" key to a free ` +
        "port, 0 for any)",
    );
  } finally {
    taken.close();
  }
});
