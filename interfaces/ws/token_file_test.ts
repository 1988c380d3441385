import assert from "node:assert/strict";
import { TerretError } from "@terret/hames";
import { generateToken, loadOrCreateToken } from "./token_file.ts";

const TOKEN_FILE_NAME = "ws/token";
import { TOKEN_PATTERN } from "./config.ts";

Deno.test("generateToken() is 43 base64url characters that a token may hold", () => {
  const tokens = new Set(Array.from({ length: 100 }, generateToken));
  assert.equal(tokens.size, 100);
  for (const token of tokens) {
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.match(token, TOKEN_PATTERN);
  }
});

Deno.test("loadOrCreateToken() creates the file with mode 0600 once, then reuses it", async () => {
  const home = await Deno.makeTempDir();
  try {
    const path = `${home}/nested/${TOKEN_FILE_NAME}`;
    const first = await loadOrCreateToken(path);
    assert.deepStrictEqual([first.created, first.path], [true, path]);
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal(await Deno.readTextFile(path), `${first.token}\n`);
    const again = await loadOrCreateToken(path);
    assert.deepStrictEqual(again, { token: first.token, created: false, path });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("loadOrCreateToken() agrees on one token when two callers race to create it", async () => {
  const home = await Deno.makeTempDir();
  try {
    const path = `${home}/${TOKEN_FILE_NAME}`;
    const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateToken(path)));
    assert.equal(new Set(results.map((result) => result.token)).size, 1);
    assert.equal(results.filter((result) => result.created).length, 1);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("loadOrCreateToken() refuses a file others can read and one that holds no valid token", async () => {
  const home = await Deno.makeTempDir();
  try {
    const path = `${home}/token`;
    await Deno.writeTextFile(path, "a-perfectly-fine-token-0123456789\n", { mode: 0o600 });
    await Deno.chmod(path, 0o644);
    await assert.rejects(
      loadOrCreateToken(path),
      new TerretError(
        "TokenFileExposed",
        `Cannot use the socket token in "${path}": its mode is 644, so others can read it (run: chmod 600 "${path}")`,
      ),
    );
    await Deno.chmod(path, 0o600);
    await Deno.writeTextFile(path, "short\n");
    await assert.rejects(
      loadOrCreateToken(path),
      new TerretError(
        "TokenFileInvalid",
        `Cannot use the socket token in "${path}": it must hold one token of 16 to 512 characters from ` +
          "A-Z a-z 0-9 . _ ~ + / = - (delete the file to have a new one generated)",
      ),
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
