/**
 * The model adapters' doctor check: whether each OpenRouter adapter row has an API key. It runs at `serve` too, so a
 * host booted without a key says so (the row still mounts; every request it gets fails with a clear error).
 *
 * @module
 */
import { type OpenRouterConfig, openRouterKey } from "@terret/core/llm";
import { openRouterLlm } from "@terret/core";
import type { DoctorCheck, DoctorFinding } from "@terret/terret";

/**
 * The `llm` check (`atServe`): for each enabled `terret-llm-openrouter` row, `ok` when it has a key (its `api_key`,
 * or the variable its `api_key_env` names in the checked environment), else a `warning` naming the variable.
 */
export const llmCheck: DoctorCheck = {
  name: "llm",
  description: "whether each model adapter row has an API key",
  atServe: true,
  run(input) {
    const findings: DoctorFinding[] = [];
    for (const row of input.prepared) {
      if (row.plugin !== openRouterLlm) continue;
      const config = row.parsed as OpenRouterConfig;
      const key = openRouterKey(config, input.env);
      findings.push(
        key === undefined
          ? {
            level: "warning",
            check: "llm",
            row: row.composed.id,
            message:
              `row "${row.composed.id}" has no API key: every model request for role "${config.role}" fails until ` +
              `${config.api_key_env} is set (or the row is given an api_key)`,
          }
          : {
            level: "ok",
            check: "llm",
            row: row.composed.id,
            message:
              `row "${row.composed.id}" has an API key for role "${config.role}" (${config.model})`,
          },
      );
    }
    return Promise.resolve(findings);
  },
};
