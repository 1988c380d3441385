// deno-lint-ignore-file no-console
/**
 * `trt`, the Terret command line. For now `serve` boots the kernel and says what is still missing.
 *
 * @module
 */
import { createContext } from "@terret/hames";

if (import.meta.main) {
  const verb = Deno.args[0];
  if (verb !== "serve") {
    console.error(`trt: unknown verb "${verb ?? ""}" (available: serve)`);
    Deno.exit(2);
  }
  await using ctx = createContext({ mode: "production" });
  console.log(
    `terret: kernel booted (context "${ctx.label}"); the WebSocket interface is not built yet, so there is nothing to serve`,
  );
}
