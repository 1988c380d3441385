/** The test ports: a stable port is free and below the kernel's ephemeral range, so no `port: 0` socket takes it. */
import assert from "node:assert/strict";
import { stablePort } from "./ports.ts";

Deno.test("stablePort() gives a free loopback port below the ephemeral range, drawn afresh each call", () => {
  const low = Deno.build.os === "linux"
    ? Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(/\s+/)[0])
    : 32768;
  const ports = Array.from({ length: 20 }, () => stablePort());
  for (const port of ports) {
    assert.ok(port >= 10_000 && port < low, `${port} is not in [10000, ${low})`);
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  }
  assert.ok(new Set(ports).size > 1, "the ports are drawn at random, not one fixed number");
  // An ephemeral port is never one of them.
  const ephemeral = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  assert.ok(ephemeral.addr.port >= low, `${ephemeral.addr.port}`);
  ephemeral.close();
});
