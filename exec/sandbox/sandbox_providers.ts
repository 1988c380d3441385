/**
 * The sandbox providers a config row can name for its own programs (`sandbox: deno` on an `mcp.<server>` row),
 * built from a {@linkcode ConfinementRequest}: the table `Subprocess.confine` resolves names through.
 *
 * @module
 */
import type { ConfinementRequest, Sandbox } from "@terret/core/seams";
import { TerretError } from "../errors.ts";
import { DenoSandbox } from "./deno.ts";
import { createNoneSandbox } from "./none.ts";

/**
 * Builds one provider's sandbox for a request, or says why it cannot.
 *
 * Contract: returns a sandbox that confines programs to the request's workspace directories plus exactly its
 * grants, or throws `TerretError` (`ConfigInvalid` for grants the provider cannot express); it never returns a
 * sandbox wider than asked.
 */
export type SandboxProviderFactory = (request: ConfinementRequest) => Sandbox;

/** A provider a row may name: its factory, or the reason it cannot be named here. */
export type SandboxProviderEntry =
  | { readonly factory: SandboxProviderFactory }
  | { readonly unavailable: string };

/**
 * The providers by name:
 *
 * - `deno`: a {@linkcode DenoSandbox} over the workspace, `--allow-read`/`--allow-write` of the workspace plus
 *   `grants.read`/`grants.write`, `--allow-net`/`--allow-env`/`--allow-sys` of exactly the grants, never run or
 *   ffi; the Deno binary running Terret;
 * - `none`: programs run on the host unchanged (grants mean nothing there; the row acknowledges it);
 * - `docker`: not per row (a row without `sandbox:` runs in the sandbox row's container);
 * - `bwrap`: not part of this build.
 */
export const SANDBOX_PROVIDERS: Readonly<Record<string, SandboxProviderEntry>> = Object.freeze({
  deno: {
    factory: (request: ConfinementRequest): Sandbox =>
      new DenoSandbox({
        dirs: request.dirs,
        read: request.grants.read,
        write: request.grants.write,
        net: request.grants.net,
        env: request.grants.env,
        sys: request.grants.sys,
      }),
  },
  none: {
    factory: (request: ConfinementRequest): Sandbox => {
      const { read, write, net, env, sys } = request.grants;
      if ([read, write, net, env, sys].some((list) => list.length > 0)) {
        throw new TerretError(
          "ConfigInvalid",
          `Cannot confine "${request.owner}" with the none sandbox: it grants everything, so "allow" means nothing there`,
        );
      }
      return createNoneSandbox(request.dirs);
    },
  },
  docker: {
    unavailable:
      "a row cannot have a docker container of its own; leave sandbox unset to run in the sandbox row's container",
  },
  bwrap: { unavailable: "the bwrap provider is not part of this build" },
});

/**
 * Builds and prepares the sandbox `request` names.
 *
 * @param providers the table to resolve through (default {@linkcode SANDBOX_PROVIDERS})
 * @throws {TerretError} `ConfigInvalid` for an unknown provider or grants it cannot express; `SandboxUnavailable`
 *   for a provider not available here (with why), or one whose preparation fails (with the cause)
 */
export async function buildSandbox(
  request: ConfinementRequest,
  providers: Readonly<Record<string, SandboxProviderEntry>> = SANDBOX_PROVIDERS,
): Promise<Sandbox> {
  const entry = Object.hasOwn(providers, request.provider)
    ? providers[request.provider]
    : undefined;
  if (entry === undefined) {
    throw new TerretError(
      "ConfigInvalid",
      `Cannot confine "${request.owner}" with the "${request.provider}" sandbox: no such provider (known: ${
        Object.keys(providers).map((name) => `"${name}"`).join(", ")
      })`,
    );
  }
  if ("unavailable" in entry) {
    throw new TerretError(
      "SandboxUnavailable",
      `Cannot confine "${request.owner}" with the "${request.provider}" sandbox: ${entry.unavailable}`,
    );
  }
  const sandbox = entry.factory(request);
  try {
    await sandbox.workspaceReady(request.signal === undefined ? {} : { signal: request.signal });
  } catch (error) {
    request.signal?.throwIfAborted();
    throw new TerretError(
      "SandboxUnavailable",
      `Cannot confine "${request.owner}" with the "${request.provider}" sandbox: ${
        error instanceof Error ? error.message : String(error)
      }`,
      { cause: error },
    );
  }
  return sandbox;
}
