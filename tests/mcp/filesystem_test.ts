/**
 * `@modelcontextprotocol/server-filesystem` as an MCP tool source, spawned through the subprocess seam under the
 * `deno` sandbox: confined twice to a temp workspace, by its own allowed-directory argument and by the Deno
 * permissions the sandbox derives from the workspace.
 */
import assert from "node:assert/strict";
import { denoSandboxPlugin } from "@terret/exec";
import { FILESYSTEM, mountWorld, prefetchServers, startSource } from "./_world.ts";

Deno.test("server-filesystem under the deno sandbox works inside the workspace and refuses everything outside", async () => {
  await prefetchServers();
  await using w = await mountWorld({
    plugin: denoSandboxPlugin,
    // minimatch probes one variable at load.
    config: { env: ["__MINIMATCH_TESTING_PLATFORM__"] },
  });
  await using s = await startSource(w, {
    name: "fs",
    transport: "stdio",
    command: FILESYSTEM,
    args: [w.dir],
    env: { NO_COLOR: "1" },
  });
  assert.deepStrictEqual(
    s.registry.names(),
    [
      "create_directory",
      "directory_tree",
      "edit_file",
      "get_file_info",
      "list_allowed_directories",
      "list_directory",
      "list_directory_with_sizes",
      "move_file",
      "read_file",
      "read_media_file",
      "read_multiple_files",
      "read_text_file",
      "search_files",
      "write_file",
    ].map((tool) => `mcp__fs__${tool}`),
  );
  const call = s.registry.call.bind(s.registry);
  assert.deepStrictEqual(await call("mcp__fs__list_allowed_directories"), {
    content: `Allowed directories:\n${w.dir}`,
    is_error: false,
  });
  assert.deepStrictEqual(
    await call("mcp__fs__write_file", { path: `${w.dir}/notes.txt`, content: "ünïcode\n" }),
    { content: `Successfully wrote to ${w.dir}/notes.txt`, is_error: false },
  );
  assert.equal(await Deno.readTextFile(`${w.dir}/notes.txt`), "ünïcode\n");
  assert.deepStrictEqual(await call("mcp__fs__create_directory", { path: `${w.dir}/sub` }), {
    content: `Successfully created directory ${w.dir}/sub`,
    is_error: false,
  });
  assert.deepStrictEqual(await call("mcp__fs__list_directory", { path: w.dir }), {
    content: "[FILE] notes.txt\n[DIR] sub",
    is_error: false,
  });
  assert.deepStrictEqual(await call("mcp__fs__read_text_file", { path: `${w.dir}/notes.txt` }), {
    content: "ünïcode\n",
    is_error: false,
  });
  assert.deepStrictEqual(await call("mcp__fs__read_text_file", { path: "/etc/hostname" }), {
    content: `Access denied - path outside allowed directories: /etc/hostname not in ${w.dir}`,
    is_error: true,
  });
  assert.deepStrictEqual(
    await call("mcp__fs__write_file", { path: `${w.dir}/../escape.txt`, content: "x" }),
    {
      content: `Access denied - path outside allowed directories: ${
        w.dir.slice(0, w.dir.lastIndexOf("/"))
      }/escape.txt not in ${w.dir}`,
      is_error: true,
    },
  );
  // A link made after the server started (the sandbox refuses to start in a workspace holding one).
  await Deno.symlink("/etc", `${w.dir}/etc-link`);
  const linked = await call("mcp__fs__read_text_file", { path: `${w.dir}/etc-link/hostname` });
  assert.deepStrictEqual(linked, {
    content:
      `Access denied - symlink target outside allowed directories: /etc/hostname not in ${w.dir}`,
    is_error: true,
  });
});
