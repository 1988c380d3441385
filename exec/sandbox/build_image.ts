/**
 * Building the docker sandbox's image without a registry: `make_image.sh` (shipped beside this module) assembles a
 * small root filesystem from the host's own binaries and `docker import`s it. `trt sandbox build` runs it for the
 * image a profile's `sandbox` row names.
 *
 * @module
 */

/** Options for {@linkcode buildSandboxImage}. */
export interface BuildSandboxImageOptions {
  /** Rebuild even when the image exists (default `false`: an existing image is kept). */
  readonly force?: boolean;
  /** The environment the build sees: `PATH` to find `docker`, `bash` and the host tools (default: this process's). */
  readonly env?: Readonly<Record<string, string>>;
  /** Receives the build's progress lines (its stderr) as they come. */
  readonly onLog?: (line: string) => void;
  readonly signal?: AbortSignal;
}

/** What {@linkcode buildSandboxImage} reports. */
export interface BuiltSandboxImage {
  /** True when the image exists once the build ends. */
  readonly ok: boolean;
  /** The build's exit code. */
  readonly code: number;
  /** The last progress line (the reason when `ok` is false). */
  readonly last: string;
}

/**
 * Builds (or keeps) the docker sandbox image `image` from the host's binaries, without a registry.
 *
 * Contract: runs `bash` with the bundled script, the tag in `TERRET_SANDBOX_IMAGE` and nothing else of the
 * environment but `PATH` and `HOME`; never throws for a failed build (the result says so, with the script's last
 * line); an aborted signal stops the script. Needs a running Docker engine and a glibc Linux host.
 */
export async function buildSandboxImage(
  image: string,
  options: BuildSandboxImageOptions = {},
): Promise<BuiltSandboxImage> {
  // Read in-process and fed to `bash -s`: the same from a checkout, a registry install (fetched beside the module)
  // and a compiled binary (embedded with `--include`, where no outside program can read the file).
  const script = new URL("./make_image.sh", import.meta.url);
  const text = script.protocol === "file:"
    ? await Deno.readFile(script)
    : new Uint8Array(await (await fetch(script)).arrayBuffer());
  const env = options.env ?? Deno.env.toObject();
  const child = new Deno.Command("bash", {
    args: ["-s"],
    env: {
      PATH: env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      ...(env.HOME === undefined ? {} : { HOME: env.HOME }),
      TERRET_SANDBOX_IMAGE: image,
      ...(options.force === true ? { FORCE: "1" } : {}),
    },
    clearEnv: true,
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(text);
  await writer.close();
  let last = "";
  let rest = "";
  for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
    rest += text;
    let newline: number;
    while ((newline = rest.indexOf("\n")) >= 0) {
      const line = rest.slice(0, newline);
      rest = rest.slice(newline + 1);
      if (line === "") continue;
      last = line;
      options.onLog?.(line);
    }
  }
  if (rest !== "") {
    last = rest;
    options.onLog?.(rest);
  }
  const { code } = await child.status;
  return { ok: code === 0, code, last };
}
