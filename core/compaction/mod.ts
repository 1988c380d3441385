/**
 * Compaction: the `compactor` seam (a summarizer) and the `compaction` service that appends `session/compacted`
 * when the next request nears the model's context window, or when asked.
 *
 * Import from `@terret/core/compaction`.
 *
 * @module
 */
export {
  type Compaction,
  type CompactionConfig,
  compactionConfig,
  CompactionKey,
  CompactionService,
  type CompactOptions,
} from "./compaction.ts";
export {
  type Compactor,
  CompactorKey,
  roleCompactor,
  type SummarizeInput,
  type Summary,
  SUMMARY_INSTRUCTIONS,
} from "./compactor.ts";
