#!/usr/bin/env bash
# Make sure a Docker engine is up, for CI and local test runs. Idempotent and bounded in time.
#
#  - installs Debian's docker.io (dockerd, containerd, runc, tini) via apt if `docker` or `dockerd`
#    is missing (needs root);
#  - starts `dockerd` in the background (own session, stdio detached, log in $DOCKERD_LOG) if
#    `docker info` fails and no dockerd is already starting;
#  - waits up to $DOCKERD_WAIT seconds (default 60) for `docker info`;
#  - exits 0 when the engine answers, non-zero with a loud message otherwise. Never hangs: every
#    external command that could block runs under `timeout`.
#
#   DOCKERD_LOG    log file for dockerd (default /tmp/dockerd.log)
#   DOCKERD_WAIT   seconds to wait for the engine (default 60)
#   DOCKERD_FLAGS  extra dockerd flags (default none; none are needed on Debian 12 + this kernel)
set -uo pipefail

LOG="${DOCKERD_LOG:-/tmp/dockerd.log}"
WAIT="${DOCKERD_WAIT:-60}"
FLAGS="${DOCKERD_FLAGS:-}"

say() { printf 'start_dockerd: %s\n' "$*" >&2; }
die() {
  printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' >&2
  printf '!!! start_dockerd: DOCKER ENGINE NOT AVAILABLE: %s\n' "$*" >&2
  printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' >&2
  if [[ -f "$LOG" ]]; then
    say "last lines of $LOG:"
    tail -n 20 "$LOG" >&2 || true
  fi
  exit 1
}

engine_up() { timeout 10 docker info >/dev/null 2>&1; }
# A live (non-zombie) dockerd process exists (pgrep also matches zombies, hence ps).
# shellcheck disable=SC2009
dockerd_alive() { ps -C dockerd -o stat= 2>/dev/null | grep -qv '^Z'; }

# 1. Install if needed.
if ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
  [[ "$(id -u)" == "0" ]] || die "docker/dockerd missing and not root, cannot apt-get install docker.io"
  command -v apt-get >/dev/null 2>&1 || die "docker/dockerd missing and no apt-get on this machine"
  say "installing docker.io from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  if ! timeout 600 apt-get install -y -q docker.io >/tmp/start_dockerd.apt.log 2>&1; then
    timeout 300 apt-get update -q >>/tmp/start_dockerd.apt.log 2>&1 || true
    timeout 600 apt-get install -y -q docker.io >>/tmp/start_dockerd.apt.log 2>&1 ||
      { tail -n 20 /tmp/start_dockerd.apt.log >&2; die "apt-get install docker.io failed"; }
  fi
  command -v dockerd >/dev/null 2>&1 || die "docker.io installed but dockerd still not on PATH"
fi

# 2. Already up?
if engine_up; then
  say "engine already up ($(timeout 10 docker version --format '{{.Server.Version}}' 2>/dev/null))"
  exit 0
fi

# 3. Start it, unless a dockerd is already running (e.g. still initialising).
if dockerd_alive; then
  say "a dockerd process exists but does not answer yet; waiting for it"
else
  [[ "$(id -u)" == "0" ]] || die "engine down and not root, cannot start dockerd"
  # Pid files left by a killed dockerd (and the containerd it manages) make the next start fail:
  # dockerd refuses with "pid file found", or waits 60s on a containerd pid that is only a zombie
  # ("timeout waiting for containerd to start"). PID 1 on this VM reaps orphans lazily, so a
  # SIGKILLed daemon can linger as a zombie for seconds. Drop a pid file unless it names a live,
  # non-zombie process of the right name.
  drop_stale_pidfile() {
    local pf="$1" name="$2"
    if [[ -f "$pf" ]] &&
      ! ps -p "$(cat "$pf" 2>/dev/null)" -o stat=,comm= 2>/dev/null | grep -qE "^[^Z][^ ]* +${name}\$"; then
      say "removing stale $pf"
      rm -f "$pf"
    fi
  }
  drop_stale_pidfile /var/run/docker.pid dockerd
  drop_stale_pidfile /var/run/docker/containerd/containerd.pid containerd
  say "starting dockerd ${FLAGS} (log: $LOG)"
  # setsid + full stdio redirection: the daemon must not hold the caller's pipes open (a CI step
  # reading our output would otherwise wait forever) and must survive this script's exit.
  # shellcheck disable=SC2086
  setsid dockerd $FLAGS </dev/null >>"$LOG" 2>&1 &
  disown || true
fi

# 4. Wait, bounded.
deadline=$((SECONDS + WAIT))
while ((SECONDS < deadline)); do
  if engine_up; then
    say "engine up after $((WAIT - (deadline - SECONDS)))s ($(timeout 10 docker version --format '{{.Server.Version}}' 2>/dev/null))"
    exit 0
  fi
  if ! dockerd_alive; then
    die "dockerd exited during start-up"
  fi
  sleep 1
done
die "no answer from 'docker info' within ${WAIT}s"
