import assert from "node:assert/strict";
import { parseDenoDenials } from "./deno_denials.ts";

Deno.test("parseDenoDenials() reads each kind Deno denies, once each, in order, and nothing else", () => {
  const stderr = [
    "\x1b[0m\x1b[1m\x1b[31merror\x1b[0m: Uncaught (in promise) NotCapable: Requires env access to " +
    '"__MINIMATCH_TESTING_PLATFORM__", run again with the --allow-env flag',
    "    at Object.getEnv [as get] (ext:deno_os/30_os.js:1:1291)",
    'Requires write access to "/tmp/out dir/a \\"b\\".txt", run again with the --allow-write flag',
    'NotCapable: Requires net access to "127.0.0.1:4242", run again with the --allow-net flag',
    'NotCapable: Requires env access to "__MINIMATCH_TESTING_PLATFORM__", run again with the --allow-env flag',
    "PermissionDenied: Requires read access to <CWD>, specify the required permissions during compilation",
    'Requires sys access to "hostname", run again with the --allow-sys flag',
    'Requires run access to "git", run again with the --allow-run flag',
    "Warning: Cannot access directory /etc, skipping",
    "Requires nothing access to x",
  ].join("\n");
  assert.deepStrictEqual(parseDenoDenials(stderr), [
    { kind: "env", target: "__MINIMATCH_TESTING_PLATFORM__" },
    { kind: "write", target: '/tmp/out dir/a \\"b\\".txt' },
    { kind: "net", target: "127.0.0.1:4242" },
    { kind: "read", target: "<CWD>" },
    { kind: "sys", target: "hostname" },
    { kind: "run", target: "git" },
  ]);
  assert.deepStrictEqual(parseDenoDenials("Secure MCP Filesystem Server running on stdio"), []);
});
