/**
 * The events the kernel itself declares.
 *
 * @module
 */
import { z } from "zod";
import { defineEvent, type EventDefinition } from "./event.ts";

/** Payload of {@linkcode ConfigUpdated}. */
export interface ConfigUpdatedPayload {
  /** The row id whose config changed. */
  readonly id: string;
  /** The new, validated config (secrets as materialised at boot; listeners must not log it). */
  readonly config: unknown;
}

/**
 * Emitted after `reconfigure(id, config)` succeeded, never on a rolled-back attempt.
 */
export const ConfigUpdated: EventDefinition<"emit", ConfigUpdatedPayload, void> = defineEvent(
  "config/updated",
  {
    mode: "emit",
    owner: "@terret/hames",
    description:
      "A config row was replaced wholesale and its service accepted it (emitted only on success).",
    payload: z.object({ id: z.string(), config: z.unknown() }),
  },
);

/** Payload of {@linkcode ListenerFailed}. */
export interface ListenerFailedPayload {
  /** The event whose listener threw. */
  readonly event: string;
  /** The label of the failing listener. */
  readonly label: string;
  /** What it threw. */
  readonly error: unknown;
}

/**
 * Emitted when an `emit` listener throws or rejects. The failure is isolated from the producer and reported here
 * and to the logger; a listener of this event that throws is only logged.
 */
export const ListenerFailed: EventDefinition<"emit", ListenerFailedPayload, void> = defineEvent(
  "hames/listener_failed",
  {
    mode: "emit",
    owner: "@terret/hames",
    description: "An emit listener threw or rejected; reported here instead of to the producer.",
    payload: z.object({ event: z.string(), label: z.string(), error: z.unknown() }),
  },
);

/** Payload of {@linkcode PluginFailed}. */
export interface PluginFailedPayload {
  /** The fiber id (the config row id when loaded from rows). */
  readonly id: string;
  /** The plugin name. */
  readonly plugin: string;
  /** Why it failed. */
  readonly error: unknown;
}

/** Emitted when a plugin's apply (or a service's start) throws; the plugin's effects are already disposed. */
export const PluginFailed: EventDefinition<"emit", PluginFailedPayload, void> = defineEvent(
  "hames/plugin_failed",
  {
    mode: "emit",
    owner: "@terret/hames",
    description: "A plugin failed to start; its partial effects were disposed.",
    payload: z.object({ id: z.string(), plugin: z.string(), error: z.unknown() }),
  },
);

/** Every event the kernel declares, for the events catalog. */
export const KERNEL_EVENTS: readonly EventDefinition[] = [
  ConfigUpdated,
  ListenerFailed,
  PluginFailed,
];
