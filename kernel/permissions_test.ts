import assert from "node:assert/strict";
import { z } from "zod";
import {
  definePlugin,
  defineService,
  type HostPermissions,
  pluginPermissions,
  Service,
} from "./mod.ts";

Deno.test("pluginPermissions() derives a functional plugin's grant from its parsed config", () => {
  const store = definePlugin({
    name: "store",
    config: z.object({ path: z.string(), port: z.number().default(5432) }),
    permissions: (config) => ({
      read: [config.path],
      write: [config.path],
      net: [`db:${config.port}`],
    }),
    apply() {},
  });
  assert.deepStrictEqual(pluginPermissions(store, { path: "/var/lib/t", port: 5432 }), {
    read: ["/var/lib/t"],
    write: ["/var/lib/t"],
    net: ["db:5432"],
  });
});

Deno.test("pluginPermissions() reads a Service class's static hook, and is empty without one", () => {
  class Listener extends Service<{ port: number }> {
    static readonly config = z.object({ port: z.number() });
    static permissions(config: { port: number }): HostPermissions {
      return { net: [`127.0.0.1:${config.port}`], env: ["TERRET_TOKEN"] };
    }
  }
  assert.deepStrictEqual(pluginPermissions(Listener, { port: 8080 }), {
    net: ["127.0.0.1:8080"],
    env: ["TERRET_TOKEN"],
  });
  assert.deepStrictEqual(pluginPermissions(definePlugin({ name: "quiet", apply() {} }), {}), {});
});

Deno.test("pluginPermissions() refuses a malformed grant with a TypeError naming the plugin", () => {
  const cases: [unknown, string][] = [
    [["read"], 'Cannot read the permissions of plugin "bad": expected an object'],
    [
      { network: ["x"] },
      'Cannot read the permissions of plugin "bad": unknown permission "network" (expected read, write, net, env, run, ffi, sys)',
    ],
    [
      { read: ["/a,/b"] },
      'Cannot read the permissions of plugin "bad": "read" must be true or a list of non-empty scopes without commas',
    ],
    [
      { run: "bash" },
      'Cannot read the permissions of plugin "bad": "run" must be true or a list of non-empty scopes without commas',
    ],
  ];
  for (const [grant, message] of cases) {
    const bad = definePlugin({
      name: "bad",
      permissions: () => grant as HostPermissions,
      apply() {},
    });
    assert.throws(
      () => pluginPermissions(bad, {}),
      (error: unknown) => error instanceof TypeError && error.message === message,
    );
  }
});

Deno.test("pluginPermissions() shows a hook the rows providing what it injects, and only those", () => {
  const Dirs = defineService<{ dirs: string[] }>("dirs");
  const Other = defineService<unknown>("other");
  const seen: unknown[] = [];
  const files = definePlugin({
    name: "files",
    inject: [Dirs],
    permissions(_config: unknown, deps) {
      const dirs = deps.provider(Dirs);
      seen.push(dirs, deps.provider(Other));
      const config = dirs?.config as { dirs: string[] } | undefined;
      return config === undefined ? { read: true } : { read: config.dirs, write: config.dirs };
    },
    apply() {},
  });
  const rows = new Map<unknown, { plugin: string; config: unknown }>([
    [Dirs, { plugin: "dirs-row", config: { dirs: ["/srv/a"] } }],
    [Other, { plugin: "other-row", config: {} }],
  ]);
  assert.deepStrictEqual(
    pluginPermissions(files, {}, { provider: (key) => rows.get(key) }),
    { read: ["/srv/a"], write: ["/srv/a"] },
  );
  assert.deepStrictEqual(seen, [{ plugin: "dirs-row", config: { dirs: ["/srv/a"] } }, undefined]);
  assert.deepStrictEqual(pluginPermissions(files, {}), { read: true });
});

Deno.test("pluginPermissions() shows a hook the providers of the keys its config injects", () => {
  const Store = defineService<unknown>("perm.store");
  const Cache = defineService<unknown>("perm.cache");
  const seen: unknown[] = [];
  const plugin = definePlugin({
    name: "derived",
    config: z.object({ cached: z.boolean() }),
    inject: (config) => config.cached ? [Store, Cache] : [Store],
    permissions(_config, deps) {
      seen.push([deps.provider(Store)?.plugin, deps.provider(Cache)?.plugin]);
      return {};
    },
    apply() {},
  });
  const deps = { provider: (key: { key: string }) => ({ plugin: `p.${key.key}`, config: {} }) };
  pluginPermissions(plugin, { cached: false }, deps);
  pluginPermissions(plugin, { cached: true }, deps);
  assert.deepStrictEqual(seen, [["p.perm.store", undefined], ["p.perm.store", "p.perm.cache"]]);
});
