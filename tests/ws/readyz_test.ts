/**
 * `GET /readyz`: the store, sandbox and model checks with reasons, 200 only when all are ready; answered to a
 * loopback peer or a configured token, the same 401 otherwise. `/healthz` stays liveness.
 */
import assert from "node:assert/strict";
import { LlmRegistry, openRouterLlm, type Sandbox, SandboxKey } from "@terret/core";
import { scriptedAdapter, textReply } from "@terret/core/testing";
import { Llm } from "@terret/core/llm";
import { startHarness, TOKEN } from "./_harness.ts";

async function readyz(
  port: number,
  host = "127.0.0.1",
  headers: Record<string, string> = {},
): Promise<[number, unknown]> {
  const response = await fetch(`http://${host}:${port}/readyz`, { headers });
  const text = await response.text();
  return [response.status, response.status === 401 ? text : JSON.parse(text)];
}

function sandbox(workspaceReady: () => Promise<void>): Sandbox {
  return {
    name: "docker",
    isolated: true,
    workspaceReady,
    wrap: () => Promise.reject(new Error("not used")),
  };
}

Deno.test("GET /readyz names each check that is not ready and answers 503 until all are", async () => {
  await using h = await startHarness();
  const ctx = h.ctx;
  assert.deepStrictEqual(await readyz(h.port), [503, {
    status: "not_ready",
    checks: {
      store: { ready: true },
      sandbox: { ready: true, reason: "no sandbox row is mounted: agents can run no program" },
      model: { ready: false, reason: "no llm row is mounted" },
    },
  }]);

  // A model row without a key: the adapter says why every request would fail.
  const llmFiber = ctx.plugin(LlmRegistry, {});
  await ctx.idle();
  const keyless = ctx.plugin(openRouterLlm, {
    model: "test/model",
    api_key_env: "TERRET_READYZ_TEST_NO_SUCH_KEY",
  });
  await ctx.idle();
  let dockerUp = false;
  ctx.provide(
    SandboxKey,
    sandbox(() =>
      dockerUp ? Promise.resolve() : Promise.reject(new Error("the docker daemon is not running"))
    ),
  );
  assert.deepStrictEqual(await readyz(h.port), [503, {
    status: "not_ready",
    checks: {
      store: { ready: true },
      sandbox: {
        ready: false,
        reason: "Cannot prepare the docker sandbox: the docker daemon is not running",
      },
      model: {
        ready: false,
        reason: 'Cannot send a model request for role "main": no API key is configured (set ' +
          "TERRET_READYZ_TEST_NO_SUCH_KEY in the environment of the host, or give the row an api_key)",
      },
    },
  }]);

  // The keyless row replaced by a working adapter, the sandbox up: ready.
  await keyless.dispose();
  ctx.get(Llm).register(ctx, { role: "main", adapter: scriptedAdapter([textReply("hi")]) });
  dockerUp = true;
  assert.deepStrictEqual(await readyz(h.port), [200, {
    status: "ready",
    checks: { store: { ready: true }, sandbox: { ready: true }, model: { ready: true } },
  }]);
  // Liveness is unchanged by readiness.
  const health = await fetch(`http://127.0.0.1:${h.port}/healthz`);
  assert.deepStrictEqual([health.status, await health.text()], [200, '{"status":"ok"}']);
  await llmFiber.dispose();
});

/** A non-loopback IPv4 address of this machine, when it has one. */
function externalAddress(): string | undefined {
  return Deno.networkInterfaces().find((nic) =>
    nic.family === "IPv4" && !nic.address.startsWith("127.")
  )?.address;
}

const external = externalAddress();

Deno.test({
  name: "GET /readyz from a non-loopback peer needs a configured token (the same 401 otherwise)",
  ignore: external === undefined,
  async fn() {
    await using h = await startHarness({ host: "0.0.0.0" });
    const host = external!;
    const [status, body] = await readyz(h.port, host);
    assert.deepStrictEqual([status, body], [401, "unauthorized"]);
    assert.deepStrictEqual(
      await readyz(h.port, host, { authorization: "Bearer wrong-token-0123456789abcdef" }),
      [401, "unauthorized"],
    );
    const [authorized] = await readyz(h.port, host, { authorization: `Bearer ${TOKEN}` });
    assert.equal(authorized, 503);
    // The loopback peer needs none.
    assert.equal((await readyz(h.port))[0], 503);
  },
});
