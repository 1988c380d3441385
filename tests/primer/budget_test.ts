import assert from "node:assert/strict";
import { ConfigUpdated, createContext, Loader } from "@terret/hames";
import { BudgetKey, BudgetService, shopper, ShopperKey, Spending } from "./budget.ts";

Deno.test("the shopper parks until the budget exists, then spends within it", async () => {
  await using ctx = createContext({ mode: "test" });
  const updates: unknown[] = [];
  ctx.on(ConfigUpdated, ({ id, config }) => void updates.push([id, config]));
  const loader = new Loader(ctx);
  // Rows in any order: boot order comes from `inject`.
  await loader.load([
    { id: "shopper", plugin: shopper },
    { id: "budget", plugin: BudgetService, config: { limit: 10 } },
  ]);
  const shop = ctx.get(ShopperKey);
  assert.deepStrictEqual([shop.buy(4), shop.buy(7), shop.buy(6)], [true, false, true]);
  assert.equal(ctx.get(BudgetKey).remaining, 0);

  await assert.rejects(loader.reconfigure("budget", { limit: 5 }), /Cannot lower the limit to 5/);
  await loader.reconfigure("budget", { limit: 20 });
  assert.equal(ctx.get(BudgetKey).remaining, 10);
  assert.deepStrictEqual(updates, [["budget", { limit: 20 }]]);

  // Unloading the budget withdraws it: the shopper stops with it, and the listener is gone.
  await loader.fiber("budget")!.dispose();
  assert.equal(ctx.has(ShopperKey), false);
  assert.equal(ctx.listenerCount(Spending), 0);
});
