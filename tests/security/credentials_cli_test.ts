/**
 * `trt credentials set|list|delete` as real processes: the value goes in on stdin and never comes out, the store is
 * sealed (mode 0600, no value or name in clear), a store without its key is refused by the verb and by `trt serve`,
 * and `trt --help` says the ACP verb is not available.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { writeTree } from "../fixtures/composition/tree.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../interfaces/cli/main.ts", import.meta.url));
const KEY = "0123456789abcdef".repeat(4);
const VALUE = "sk-or-v1-stored-through-stdin-0123456789";

async function trt(
  args: readonly string[],
  env: Record<string, string>,
  stdin = "",
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    cwd: ROOT,
    env: { TERRET_CREDENTIALS_KEY: "", OPENROUTER_API_KEY: "", TERRET_TOKEN: "", ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

Deno.test("trt credentials set, list and delete never echo a value; the store is sealed with mode 0600", async () => {
  await using tree = await writeTree({});
  const home = ["--home", tree.dir];
  const env = { TERRET_CREDENTIALS_KEY: KEY };
  const store = tree.path("credentials/store.enc");
  const set = await trt(["credentials", "set", "openrouter", ...home], env, `${VALUE}\n`);
  assert.deepStrictEqual(set, {
    code: 0,
    stdout: `trt credentials: stored "openrouter" in ${store} (encrypted, mode 0600)\n`,
    stderr: "",
  });
  assert.equal((await Deno.stat(store)).mode! & 0o777, 0o600);
  const sealed = await Deno.readTextFile(store);
  assert.equal(sealed.includes(VALUE), false);
  assert.equal(sealed.includes("openrouter"), false);
  assert.deepStrictEqual(await trt(["credentials", "list", ...home], env), {
    code: 0,
    stdout: "openrouter\n",
    stderr: "",
  });
  assert.deepStrictEqual(await trt(["credentials", "list", ...home], {}), {
    code: 2,
    stdout: "",
    stderr:
      `trt credentials: Cannot read the credential store "${store}": it is encrypted and TERRET_CREDENTIALS_KEY ` +
      "is not set (the store is never read without its key)\n",
  });
  assert.deepStrictEqual(await trt(["credentials", "delete", "openrouter", ...home], env), {
    code: 0,
    stdout: `trt credentials: deleted "openrouter" from ${store}\n`,
    stderr: "",
  });
  assert.deepStrictEqual(await trt(["credentials", "delete", "openrouter", ...home], env), {
    code: 1,
    stdout: "",
    stderr: `trt credentials: cannot delete "openrouter": it is not stored in ${store}\n`,
  });
  assert.deepStrictEqual(await trt(["credentials", "set", "openrouter", ...home], env, ""), {
    code: 2,
    stdout: "",
    stderr:
      'trt credentials: set reads the value of "openrouter" from standard input; it was empty or shorter than 4 ' +
      "characters (usage: trt credentials set|list|delete [NAME])\n",
  });
});

Deno.test("trt serve refuses to boot on a credential store present without its key", async () => {
  await using tree = await writeTree({
    "patch.yml":
      "rows:\n  - id: sandbox\n    config: { image: terret/sandbox:test, docker: /nonexistent/docker }\n" +
      "  - id: interfaces.ws\n    config: { port: 0, token_env: TERRET_TOKEN }\n",
  });
  const home = ["--home", tree.dir];
  await trt(["credentials", "set", "openrouter", ...home], { TERRET_CREDENTIALS_KEY: KEY }, VALUE);
  const served = await trt(["serve", ...home, "--patch", tree.path("patch.yml")], {
    TERRET_TOKEN: "a-socket-token-from-the-env-0123",
  });
  assert.equal(served.code, 1);
  assert.equal(
    served.stderr.split("\n").at(-2),
    `trt serve: Cannot boot: row "credentials" failed to start: Cannot read the credential store "${
      tree.path("credentials/store.enc")
    }": it is encrypted and TERRET_CREDENTIALS_KEY is not set (the store is never read without its key)`,
  );
});

Deno.test("trt --help describes the acp verb as what it does", async () => {
  const help = await trt(["--help"], {});
  assert.equal(help.code, 0);
  assert.equal(
    help.stdout.split("\n").find((line) => line.trimStart().startsWith("acp")),
    "  acp          Serve the profile to an editor over the Agent Client Protocol on stdio.",
  );
});
