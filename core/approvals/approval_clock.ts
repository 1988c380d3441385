/**
 * The wall clock approval deadlines are computed and checked on (service key `approvals.clock`, optional): when
 * nothing provides it, `Date.now()`. A host or a test provides another to shift time (a deadline that passed while
 * the process was down is applied on boot).
 *
 * @module
 */
import { defineService, type ServiceKey } from "@terret/hames";

/**
 * A wall clock.
 *
 * Contract: `now()` returns epoch milliseconds, never decreasing within a process; it must not throw.
 */
export interface ApprovalClock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The approval clock's service key (`approvals.clock`). */
export const ApprovalClockKey: ServiceKey<ApprovalClock> = defineService<ApprovalClock>(
  "approvals.clock",
  "The wall clock approval deadlines run on (default Date.now)",
);

/** The real clock. */
export const SYSTEM_CLOCK: ApprovalClock = Object.freeze({ now: () => Date.now() });
