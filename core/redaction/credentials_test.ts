import assert from "node:assert/strict";
import { definePlugin, Loader, LoaderKey } from "@terret/hames";
import { z } from "zod";
import { createToolStack } from "../tools/testing.ts";
import { CredentialsKey, credentialsPlugin } from "./credentials.ts";
import { CredentialStore } from "./credential_store.ts";
import { DEFAULT_REDACTION_TOKEN as T } from "./redactor.ts";
import { secretField } from "./secret_fields.ts";

const KEY = "cd".repeat(32);

Deno.test("credentials: a schema-marked value of any row, a stored value and an added secret are scrubbed; the environment wins over the store", async () => {
  const dir = await Deno.makeTempDir();
  const env = "TERRET_TEST_CRED_" + crypto.randomUUID().replaceAll("-", "_");
  try {
    await (await CredentialStore.open(`${dir}/credentials.enc`, KEY)).set(
      "alpha",
      "stored-alpha-0001",
    );
    await (await CredentialStore.open(`${dir}/credentials.enc`, KEY)).set(
      "beta",
      "stored-beta-0002",
    );
    Deno.env.set("TERRET_CREDENTIALS_KEY", KEY);
    Deno.env.set(env, "env-alpha-0003");
    await using s = await createToolStack({ allow: ["*"] });
    const loader = new Loader(s.ctx);
    s.ctx.provide(LoaderKey, loader);
    const holder = definePlugin({
      name: "holder",
      config: z.object({ password: secretField(z.string()), note: z.string() }),
      apply() {},
    });
    await loader.load([
      {
        id: "credentials",
        plugin: credentialsPlugin,
        config: { providers: { alpha: { env: [env] } }, store: "credentials.enc", dir },
      },
      {
        id: "holder",
        plugin: holder,
        config: { password: "marked-secret-0004", note: "plain-note" },
      },
    ]);
    const credentials = s.ctx.get(CredentialsKey);
    assert.deepStrictEqual(
      [credentials.resolve("alpha"), credentials.resolve("beta"), credentials.names()],
      ["env-alpha-0003", "stored-beta-0002", ["alpha", "beta"]],
    );
    const owner = s.ctx.fork("owner");
    credentials.addSecret(owner, "added-secret-0005");
    await s.sessions.create({ session_id: "s1" });
    const text = "env-alpha-0003 stored-beta-0002 marked-secret-0004 added-secret-0005 plain-note";
    await s.sessions.append("s1", { type: "user/message", payload: { content: text } });
    await owner.dispose();
    await s.sessions.append("s1", { type: "user/message", payload: { content: text } });
    assert.deepStrictEqual(
      (await s.sessions.read("s1", { types: ["user/message"] })).map((event) => event.payload),
      [
        { content: `${T} ${T} ${T} ${T} plain-note` },
        { content: `${T} ${T} ${T} added-secret-0005 plain-note` },
      ],
    );
  } finally {
    Deno.env.delete("TERRET_CREDENTIALS_KEY");
    Deno.env.delete(env);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("credentials: a store present without its key makes the row fail to start, never read as plain text", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await (await CredentialStore.open(`${dir}/credentials.enc`, KEY)).set(
      "alpha",
      "stored-alpha-0001",
    );
    Deno.env.delete("TERRET_CREDENTIALS_KEY");
    await using s = await createToolStack({ allow: ["*"] });
    const loader = new Loader(s.ctx);
    await assert.rejects(
      loader.load([{
        id: "credentials",
        plugin: credentialsPlugin,
        config: { store: "credentials.enc", dir },
      }]),
      {
        name: "TerretError",
        message:
          `Cannot boot: row "credentials" failed to start: Cannot read the credential store "${dir}/credentials.enc": ` +
          "it is encrypted and TERRET_CREDENTIALS_KEY is not set (the store is never read without its key)",
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("credentials: streamed text is held back only where it may start or end in a secret", async () => {
  const env = "TERRET_TEST_CRED_" + crypto.randomUUID().replaceAll("-", "_");
  Deno.env.set(env, "env-secret-0006");
  try {
    await using s = await createToolStack({ allow: ["*"] });
    const loader = new Loader(s.ctx);
    s.ctx.provide(LoaderKey, loader);
    await loader.load([{
      id: "credentials",
      plugin: credentialsPlugin,
      config: { providers: { alpha: { env: [env] } } },
    }]);
    assert.equal(s.ctx.get(CredentialsKey).resolve("alpha"), "env-secret-0006");
    assert.ok(s.sessions.scrubbing);
    // Plain text streams whole; a tail that may start the secret, or the whole secret at the end, waits.
    assert.deepStrictEqual(
      [
        "Plain words stream at once. ",
        "Almost env-sec",
        "Done: env-secret-0006",
        "env-secret-0006 then more",
      ]
        .map((text) => s.sessions.safePrefix(text)),
      [28, 7, 6, 24], // the last "e" may start the secret
    );
  } finally {
    Deno.env.delete(env);
  }
});
