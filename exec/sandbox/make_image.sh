#!/usr/bin/env bash
# Build a Terret docker sandbox image WITHOUT any registry (`trt sandbox build` runs this for a profile's image).
#
# Assembles a tiny root filesystem from the host's own binaries (bash, dash as sh, coreutils,
# grep, sed, procps, a few util-linux/findutils tools) plus the shared libraries `ldd` says they
# need, then `docker import`s it. Idempotent: if the image exists it only prints the tag
# (set FORCE=1 to rebuild). Prints the image tag on stdout as its last line.
#
#   TERRET_SANDBOX_IMAGE  tag to build (default terret/sandbox:test)
#   FORCE=1               rebuild even if the tag exists
#
# Needs a running Docker engine (see tests/docker/start_dockerd.sh) and a glibc Linux host with
# merged /usr (Debian 12). Everything is copied from the host, so the image matches the host's
# architecture and libc.
set -euo pipefail

TAG="${TERRET_SANDBOX_IMAGE:-terret/sandbox:test}"

log() { printf 'make_image: %s\n' "$*" >&2; }

if ! docker info >/dev/null 2>&1; then
  log "ERROR: Docker engine is not reachable (start dockerd first; tests/docker/start_dockerd.sh does it on Debian)"
  exit 1
fi

if [[ "${FORCE:-0}" != "1" ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  log "image $TAG already exists (FORCE=1 to rebuild)"
  echo "$TAG"
  exit 0
fi

# Programs that must be present; the build fails if the host lacks one. `stty`: the docker provider's exec wrapper
# sets the terminal size with it and the persistent shell turns echo off with it (without it the shell's own
# command lines would come back as output). `ps`: the docker lanes count the processes left in the container.
REQUIRED=(
  bash sh cat ls id env sleep true false echo mkdir rm grep head tail wc kill setsid
  readlink stat touch printf sed pwd stty ps
)
# Nice to have; skipped quietly when the host lacks them.
OPTIONAL=(
  cp mv ln chmod chown uname tty date sort uniq tr cut dirname basename find xargs
  timeout tee seq nohup realpath mktemp test "[" expr hostname whoami sh dash rmdir du df tac
  nproc yes base64 md5sum sha256sum diff cmp
)

ROOT="$(mktemp -d "${TMPDIR:-/tmp}/terret-rootfs.XXXXXX")"
cleanup() { rm -rf "$ROOT"; }
trap cleanup EXIT

# Merged-/usr layout, like the host.
mkdir -p "$ROOT"/usr/{bin,sbin,lib,lib64} "$ROOT"/{etc,tmp,root,home,proc,sys,dev,var/tmp,run}
ln -s usr/bin "$ROOT/bin"
ln -s usr/sbin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"
chmod 1777 "$ROOT/tmp" "$ROOT/var/tmp"
chmod 700 "$ROOT/root"

# Resolve a program name to a real file on the host (not a shell builtin or function).
find_prog() {
  local name="$1" d
  for d in /usr/bin /bin /usr/sbin /sbin /usr/local/bin; do
    if [[ -x "$d/$name" && ! -d "$d/$name" ]]; then
      printf '%s\n' "$d/$name"
      return 0
    fi
  done
  return 1
}

# Copy one host file to the same canonical location inside ROOT (following symlinks so the
# name ldd printed, e.g. libc.so.6, becomes a regular file there).
copy_file() {
  local src="$1" dir base
  dir="$(readlink -f "$(dirname "$src")")"
  base="$(basename "$src")"
  mkdir -p "$ROOT$dir"
  [[ -e "$ROOT$dir/$base" ]] || cp -L "$src" "$ROOT$dir/$base"
}

declare -A LIBS=()
add_libs() {
  local bin="$1" line lib
  while IFS= read -r line; do
    # Forms: "libx.so.1 => /lib/.../libx.so.1 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
    lib=""
    if [[ "$line" == *"=> /"* ]]; then
      lib="${line#*=> }"; lib="${lib%% (*}"
    elif [[ "$line" =~ ^[[:space:]]*(/[^[:space:]]+) ]]; then
      lib="${BASH_REMATCH[1]}"
    fi
    [[ -n "$lib" && -e "$lib" ]] && LIBS["$lib"]=1
  done < <(ldd "$bin" 2>/dev/null || true)
}

copy_prog() {
  local name="$1" path real
  path="$(find_prog "$name")" || return 1
  real="$(readlink -f "$path")"
  # Install under /usr/bin (the merged-/usr PATH) with the requested name.
  [[ -e "$ROOT/usr/bin/$name" ]] || cp -L "$real" "$ROOT/usr/bin/$name"
  add_libs "$real"
}

for p in "${REQUIRED[@]}"; do
  if ! copy_prog "$p"; then
    log "ERROR: required program '$p' not found on the host"
    exit 1
  fi
done
for p in "${OPTIONAL[@]}"; do
  copy_prog "$p" || log "note: optional program '$p' not on host, skipped"
done

for lib in "${!LIBS[@]}"; do
  copy_file "$lib"
done
# The dynamic loader must also be reachable at the ABI path programs were linked against.
if [[ -e /lib64/ld-linux-x86-64.so.2 ]]; then
  copy_file /lib64/ld-linux-x86-64.so.2
fi

# A few terminfo entries so interactive bash/readline behaves under a pty (small, optional).
for ti in x/xterm x/xterm-256color x/xterm-color d/dumb v/vt100 l/linux s/screen s/screen-256color; do
  for tdir in /usr/lib/terminfo /usr/share/terminfo /lib/terminfo; do
    if [[ -f "$tdir/$ti" ]]; then
      copy_file "$tdir/$ti"
      break
    fi
  done
done

cat >"$ROOT/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$ROOT/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$ROOT/etc/nsswitch.conf"
printf 'terret-sandbox\n' >"$ROOT/etc/hostname"
: >"$ROOT/etc/hosts"
: >"$ROOT/etc/resolv.conf"

# Smoke-check the rootfs with the host kernel before importing: bash must start from it.
if command -v chroot >/dev/null 2>&1 && [[ "$(id -u)" == "0" ]]; then
  chroot "$ROOT" /bin/bash -c 'true' || { log "ERROR: assembled rootfs cannot run bash"; exit 1; }
fi

OLD_ID="$(docker image inspect --format '{{.Id}}' "$TAG" 2>/dev/null || true)"
log "rootfs: $(du -sh "$ROOT" | cut -f1) in $(find "$ROOT" -type f | wc -l) files; importing as $TAG"
tar --numeric-owner --owner=0 --group=0 -C "$ROOT" -c . |
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'WORKDIR /' \
    --change 'CMD ["/bin/bash"]' \
    --change 'LABEL org.terret.sandbox=test' \
    - "$TAG" >/dev/null

# On FORCE=1 the previous image is left untagged; drop it unless a container still uses it.
NEW_ID="$(docker image inspect --format '{{.Id}}' "$TAG")"
if [[ -n "$OLD_ID" && "$OLD_ID" != "$NEW_ID" ]]; then
  docker image rm "$OLD_ID" >/dev/null 2>&1 || true
fi

echo "$TAG"
