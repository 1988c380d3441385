import assert from "node:assert/strict";
import { isTerretError } from "@terret/hames";
import { CredentialStore } from "./credential_store.ts";

const KEY = btoa(String.fromCharCode(...new Uint8Array(32).map((_, i) => i + 1)));
const OTHER = "ab".repeat(32);

async function refused(promise: Promise<unknown>, code: string, message: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isTerretError(error));
    assert.equal(error.code, code);
    assert.equal(error.message, message);
    return true;
  });
}

Deno.test("CredentialStore seals values with AES-256-GCM in a 0600 file that never holds them in clear", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/home/credentials.enc`;
    const store = await CredentialStore.open(path, KEY);
    await store.set("openrouter", "sk-or-v1-secret-value-0001");
    await store.set("github", "ghp_value_0002");
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    const text = await Deno.readTextFile(path);
    assert.equal(text.includes("secret-value"), false);
    assert.equal(text.includes("openrouter"), false);
    const again = await CredentialStore.open(path, KEY);
    assert.deepStrictEqual(again.names(), ["github", "openrouter"]);
    assert.equal(again.get("openrouter"), "sk-or-v1-secret-value-0001");
    assert.equal(await again.delete("github"), true);
    assert.equal(await again.delete("github"), false);
    assert.deepStrictEqual((await CredentialStore.open(path, KEY)).names(), ["openrouter"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("CredentialStore refuses a store without its key, with another key, a plain-text file and a malformed key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/credentials.enc`;
    await (await CredentialStore.open(path, KEY)).set("openrouter", "value-1234");
    await refused(
      CredentialStore.open(path, undefined),
      "CredentialsLocked",
      `Cannot read the credential store "${path}": it is encrypted and TERRET_CREDENTIALS_KEY is not set (the store is never read without its key)`,
    );
    await refused(
      CredentialStore.open(path, OTHER),
      "CredentialsStoreInvalid",
      `Cannot read the credential store "${path}": TERRET_CREDENTIALS_KEY does not open it (a different key, or the file was altered)`,
    );
    await Deno.writeTextFile(path, '{"openrouter":"plain-text-value"}');
    await refused(
      CredentialStore.open(path, KEY),
      "CredentialsStoreInvalid",
      `Cannot read the credential store "${path}": it is not an encrypted store (refusing to read it as plain text)`,
    );
    await refused(
      CredentialStore.open(path, "too-short"),
      "CredentialsKeyInvalid",
      "Cannot use TERRET_CREDENTIALS_KEY: it must be 32 bytes as base64 (openssl rand -base64 32) or 64 hex digits",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
