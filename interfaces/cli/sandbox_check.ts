/**
 * The execution world's doctor check: which sandbox providers work on this machine, and whether the one the
 * profile's sandbox row uses does. It runs at `serve` too, so a host whose sandbox cannot start says so at boot,
 * naming the row to patch (plan §13: never silently unsandboxed).
 *
 * @module
 */
import { pluginProvides } from "@terret/hames";
import { SandboxKey } from "@terret/core";
import type {
  BwrapSandboxConfig,
  DenoSandboxConfig,
  DockerSandboxConfig,
  SandboxProbe,
} from "@terret/exec/sandbox";
import { reapStaleContainers } from "@terret/exec/sandbox";
import { probeSandboxProviders } from "@terret/exec";
import {
  acquireHomeLock,
  type DoctorCheck,
  type DoctorFinding,
  type PreparedRow,
} from "@terret/terret";

/** Options of {@linkcode createSandboxCheck}. */
export interface SandboxCheckOptions {
  /** Probes the providers (default {@linkcode probeSandboxProviders}); tests pass a scripted one. */
  readonly probe?: typeof probeSandboxProviders;
  /**
   * Removes a home's stale sandbox containers (default {@linkcode reapStaleContainers}, which runs the docker CLI);
   * tests pass a scripted one.
   */
  readonly reap?: typeof reapStaleContainers;
}

/**
 * Creates the `sandbox` check (`atServe`). It probes `none`, `docker` (with the sandbox row's `docker` CLI and
 * `image` when the row uses `sandbox-docker`), `deno` and `bwrap`, reports each as `info`, then judges the enabled
 * row that provides `sandbox`. At serve it probes only that row's provider (none for `sandbox-none` or no row):
 *
 * - `sandbox-docker` that cannot start here: an `error` saying programs fail until it can (they never run
 *   unsandboxed) and how to patch the row; one that starts but with a network: a `warning` (not isolated);
 * - `sandbox-deno`: `ok` when its Deno runs (it runs Deno programs only), else an `error`;
 * - `sandbox-bwrap`: `ok` when bubblewrap creates user namespaces here, else an `error` (the row refuses to mount);
 *   a `warning` with `network: host` (not isolated);
 * - `sandbox-none`: a `warning` that programs run unsandboxed on the host;
 * - no sandbox row: `info` (nothing in the profile runs programs through one).
 */
export function createSandboxCheck(options: SandboxCheckOptions = {}): DoctorCheck {
  const probe = options.probe ?? probeSandboxProviders;
  const reapStale = options.reap ?? reapStaleContainers;
  return {
    name: "sandbox",
    description: "which sandbox providers work on this machine, and the sandbox row's",
    atServe: true,
    async run(input, runOptions) {
      const row = input.prepared.find((candidate) =>
        pluginProvides(candidate.plugin).includes(SandboxKey)
      );
      const plugin = row?.composed.plugin;
      const docker = plugin === "sandbox-docker" ? row!.parsed as DockerSandboxConfig : undefined;
      const deno = plugin === "sandbox-deno" ? row!.parsed as DenoSandboxConfig : undefined;
      const bwrap = plugin === "sandbox-bwrap" ? row!.parsed as BwrapSandboxConfig : undefined;
      // At serve only the row's own provider is judged, and only warnings and errors are shown: probing the others
      // would only inform, and a docker probe starts a container.
      const own: SandboxProbe["name"] | undefined = docker !== undefined
        ? "docker"
        : deno !== undefined
        ? "deno"
        : bwrap !== undefined
        ? "bwrap"
        : undefined;
      const only = input.atServe !== true ? undefined : own === undefined ? [] : [own];
      const probes = only?.length === 0 ? [] : await probe({
        ...(only === undefined ? {} : { only }),
        ...(docker === undefined ? {} : { docker: docker.docker, image: docker.image }),
        ...(deno?.deno === undefined ? {} : { deno: deno.deno }),
        ...(bwrap === undefined ? {} : { bwrap: bwrap.bwrap }),
        ...(runOptions?.signal === undefined ? {} : { signal: runOptions.signal }),
      });
      const findings: DoctorFinding[] = probes.map((found) => ({
        level: "info",
        check: "sandbox",
        message: `${found.name}: ${
          found.available
            ? `works${found.isolated ? " (isolating)" : " (not isolating)"}`
            : "unavailable"
        }: ${found.reason}`,
      }));
      findings.push(judge(row, probes));
      const dockerWorks = probes.some((found) => found.name === "docker" && found.available);
      if (docker?.home !== undefined && dockerWorks) {
        findings.push(...await reap(docker, reapStale));
      }
      return findings;
    },
  };
}

/**
 * Removes the containers a killed server of this home left behind, when no server holds the home (at `serve` the
 * lock is held, and the row itself reaps at mount).
 */
async function reap(
  docker: DockerSandboxConfig,
  reapStale: typeof reapStaleContainers,
): Promise<DoctorFinding[]> {
  const lock = await acquireHomeLock(docker.home!).catch(() => undefined);
  if (lock === undefined) return [];
  try {
    const reaped = await reapStale({ docker: docker.docker, home: docker.home! });
    if (reaped.length === 0) return [];
    return [{
      level: "warning",
      check: "sandbox",
      message: `removed ${reaped.length} stale sandbox container${
        reaped.length === 1 ? "" : "s"
      } of this home that a server killed without shutting down left running: ${reaped.join(", ")}`,
    }];
  } catch (error) {
    return [{
      level: "warning",
      check: "sandbox",
      message: `cannot look for stale sandbox containers: ${(error as Error).message}`,
    }];
  } finally {
    await lock.release();
  }
}

/** The sandbox check with the real probe (what `trt` runs). */
export const sandboxCheck: DoctorCheck = createSandboxCheck();

function judge(row: PreparedRow | undefined, probes: readonly SandboxProbe[]): DoctorFinding {
  if (row === undefined) {
    return {
      level: "info",
      check: "sandbox",
      message: "no enabled row provides the sandbox, so nothing in this profile can run programs",
    };
  }
  const id = row.composed.id;
  const finding = (level: DoctorFinding["level"], message: string): DoctorFinding => ({
    level,
    check: "sandbox",
    row: id,
    message,
  });
  const found = (name: SandboxProbe["name"]): SandboxProbe =>
    probes.find((candidate) => candidate.name === name) ??
      { name, available: false, isolated: false, reason: "it was not probed" };
  const patchHint =
    `fix it, or patch row "${id}" with another provider (plugin: sandbox-none with config ` +
    `{acknowledge_unsandboxed: true} runs programs on the host, uncontained)`;
  switch (row.composed.plugin) {
    case "sandbox-docker": {
      const docker = found("docker");
      const config = row.parsed as DockerSandboxConfig;
      if (!docker.available) {
        return finding(
          "error",
          `the docker sandbox cannot start on this machine: ${docker.reason}. Every program an agent runs ` +
            `fails until it can (none runs unsandboxed): ${patchHint}`,
        );
      }
      if (config.network !== "none") {
        return finding(
          "warning",
          `programs run in a docker container with network "${config.network}": not isolated (network: none isolates)`,
        );
      }
      return finding(
        "ok",
        `programs run in a docker container without a network (${docker.reason})`,
      );
    }
    case "sandbox-deno": {
      const deno = found("deno");
      if (!deno.available) {
        return finding(
          "error",
          `the deno sandbox cannot run on this machine: ${deno.reason}. Every program an agent runs fails ` +
            `until it can (none runs unsandboxed): ${patchHint}`,
        );
      }
      const config = row.parsed as DenoSandboxConfig;
      const open = config.net.length > 0 || config.allow_import.length > 0;
      return finding(
        open ? "warning" : "ok",
        `programs run as Deno programs under derived permissions; anything else is refused${
          open ? "; not isolated: the row grants network or remote imports" : ""
        }`,
      );
    }
    case "sandbox-bwrap": {
      const bwrap = found("bwrap");
      if (!bwrap.available) {
        return finding(
          "error",
          `the bwrap sandbox cannot run on this machine: ${bwrap.reason}. The row refuses to mount, and no ` +
            `program runs unsandboxed: ${patchHint}`,
        );
      }
      const config = row.parsed as BwrapSandboxConfig;
      return config.network === "host"
        ? finding(
          "warning",
          `programs run in bubblewrap sandboxes sharing the host's network: not isolated (network: none isolates) (${bwrap.reason})`,
        )
        : finding("ok", `programs run in bubblewrap sandboxes without a network (${bwrap.reason})`);
    }
    case "sandbox-none":
      return finding(
        "warning",
        `programs run UNSANDBOXED on the host (plugin "sandbox-none", acknowledged in its config); patch row "${id}" with plugin: sandbox-docker to contain them${
          !probes.some((probe) => probe.name === "docker")
            ? " (`trt doctor` says which providers work here)"
            : found("docker").available
            ? " (docker works here)"
            : ""
        }`,
      );
    default:
      return finding(
        "info",
        `provided by plugin "${row.composed.plugin}", which doctor cannot probe`,
      );
  }
}
