/**
 * `trt credentials set|list|delete`: edits the encrypted credential store the profile's `credentials` row names.
 * A value is read from standard input (never from the command line, where other users' `ps` would see it) and is
 * never printed.
 *
 * @module
 */
import {
  CREDENTIALS_KEY_ENV,
  type CredentialsConfig,
  CredentialStore,
  credentialStorePath,
} from "@terret/core/redaction";
import { prepareRow } from "@terret/terret";
import type { VerbContext } from "./trt.ts";

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The actions of `trt credentials`. */
export const CREDENTIAL_ACTIONS: readonly string[] = Object.freeze(["set", "list", "delete"]);

/**
 * Runs `trt credentials <action> [name]`.
 *
 * @returns 0 done, 1 `delete` of a name not stored, 2 a usage error or a store that cannot be opened
 */
export async function credentialsVerb(
  context: VerbContext,
  action: string,
  name: string | undefined,
): Promise<number> {
  const { io } = context;
  const usage = (why: string): number => {
    io.stderr(`trt credentials: ${why} (usage: trt credentials set|list|delete [NAME])\n`);
    return 2;
  };
  if (!CREDENTIAL_ACTIONS.includes(action)) return usage(`unknown action "${action}"`);
  if (action === "list" && name !== undefined) return usage("list takes no name");
  if (action !== "list" && name === undefined) return usage(`${action} needs a provider name`);
  if (name !== undefined && !NAME.test(name)) {
    return usage(`invalid provider name "${name}" (lowercase letters, digits, . _ -)`);
  }
  const resolved = await context.resolve();
  const row = resolved.rows.find((candidate) => candidate.id === "credentials");
  if (row === undefined || row.disabled) {
    io.stderr(
      'trt credentials: Cannot edit credentials: the profile has no enabled "credentials" row\n',
    );
    return 2;
  }
  const prepared = await prepareRow(resolved, row, { env: io.env });
  const path = credentialStorePath(prepared.parsed as CredentialsConfig);
  if (path === undefined) {
    io.stderr(
      'trt credentials: Cannot edit credentials: row "credentials" names no store (set its config key "store")\n',
    );
    return 2;
  }
  const store = await CredentialStore.open(path, io.env.get(CREDENTIALS_KEY_ENV));
  if (action === "list") {
    for (const stored of store.names()) io.stdout(`${stored}\n`);
    return 0;
  }
  if (action === "delete") {
    if (await store.delete(name!)) {
      io.stdout(`trt credentials: deleted "${name}" from ${path}\n`);
      return 0;
    }
    io.stderr(`trt credentials: cannot delete "${name}": it is not stored in ${path}\n`);
    return 1;
  }
  const value = (await readAll(io.stdin)).replace(/\r?\n$/, "");
  if (value.length < 4) {
    return usage(
      `set reads the value of "${name}" from standard input; it was empty or shorter than 4 characters`,
    );
  }
  await store.set(name!, value);
  io.stdout(`trt credentials: stored "${name}" in ${path} (encrypted, mode 0600)\n`);
  return 0;
}

async function readAll(stdin: ReadableStream<Uint8Array> | undefined): Promise<string> {
  if (stdin === undefined) return "";
  return await new Response(stdin).text();
}
