import { z } from "zod";
import { defineEvent, definePlugin, defineService, Service } from "@terret/hames";

/** What the `budget` service offers its consumers. */
export interface Budget {
  readonly remaining: number;
}

/** The key the budget service claims. */
export const BudgetKey = defineService<Budget>("budget", "Tracks spending against a limit");

/** Asks listeners whether `amount` may be spent; the chain returns whether it was. */
export const Spending = defineEvent("budget/spending", {
  mode: "waterfall",
  owner: "primer",
  description: "A spend is requested; the budget vetoes it when it would pass the limit",
  payload: z.object({ amount: z.number().positive() }),
  result: z.boolean(),
});

/** The budget: vetoes spends past `limit`; `limit` can be reconfigured live, never below what is spent. */
export class BudgetService extends Service<{ limit: number }> implements Budget {
  static override readonly name = "budget";
  static readonly key = BudgetKey;
  static readonly config = z.object({ limit: z.number().positive() });
  #spent = 0;

  get remaining(): number {
    return this.config.limit - this.#spent;
  }

  override start(): void {
    this.ctx.on(Spending, (request, next) => {
      if (request.amount > this.remaining) return false;
      this.#spent += request.amount;
      return next();
    });
  }

  override reconfigure(config: { limit: number }): void {
    if (config.limit < this.#spent) {
      throw new RangeError(
        `Cannot lower the limit to ${config.limit}: ${this.#spent} is already spent`,
      );
    }
  }
}

/** A consumer: parks until `budget` exists, then spends through the waterfall. */
export const shopper = definePlugin({
  name: "shopper",
  inject: [BudgetKey],
  apply(ctx) {
    ctx.provide(ShopperKey, {
      buy: (amount) => ctx.waterfall(Spending, { amount }, () => true),
    });
  },
});

/** What the shopper offers. */
export const ShopperKey = defineService<{ buy(amount: number): boolean }>("shopper");
