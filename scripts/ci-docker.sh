#!/usr/bin/env bash
# Docker for CI (draft, to be wired into .ci/run): make sure a Docker daemon answers, and stop
# afterwards only the daemon this script started.
#
#   scripts/ci-docker.sh start    install docker.io (and debootstrap) when needed, start dockerd
#                                 in the background, wait until it answers (default subcommand)
#   scripts/ci-docker.sh stop     stop the dockerd that `start` started (nothing else)
#   scripts/ci-docker.sh status   say whether a daemon answers and whether we started it
#
# State (pid file, daemon log) lives in $POLE_DOCKER_STATE (default /tmp/pole-bench-dockerd), so a
# daemon that was already running before `start` (a developer's own) is never touched by `stop`.
# Nothing here contacts a container registry; apt-get reaches only Debian's mirrors.
set -euo pipefail

state_dir="${POLE_DOCKER_STATE:-/tmp/pole-bench-dockerd}"
pid_file="$state_dir/dockerd.pid"
log_file="$state_dir/dockerd.log"
# Seconds to wait for a fresh daemon to answer, and for it to exit on stop.
start_timeout="${POLE_DOCKER_START_TIMEOUT:-60}"
stop_timeout="${POLE_DOCKER_STOP_TIMEOUT:-30}"

say() { echo "ci-docker: $*"; }

daemon_answers() { docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; }

# The pid in our pid file, if that process is still alive and still a dockerd (guards against the
# pid having been reused by something else since).
our_pid() {
  [[ -f "$pid_file" ]] || return 1
  local pid
  pid="$(cat "$pid_file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  [[ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" == dockerd ]] || return 1
  echo "$pid"
}

apt_install() {
  # apt-cache and apt-get need fresh lists on a new machine; one update per call is enough.
  say "installing $* from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

start() {
  mkdir -p "$state_dir"
  # The offline base image is built with debootstrap, needed even when a daemon already answers.
  local missing=()
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  if daemon_answers; then
    [[ ${#missing[@]} -eq 0 ]] || apt_install "${missing[@]}"
    if our_pid >/dev/null; then
      say "daemon started earlier by this script answers (pid $(our_pid))"
    else
      say "a Docker daemon already answers; starting none (stop will leave it alone)"
    fi
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  # docker.io brings its own CLI; a CLI already on PATH (any recent one) also talks to it.
  command -v docker >/dev/null 2>&1 || missing+=(docker.io)
  [[ ${#missing[@]} -eq 0 ]] || apt_install $(printf '%s\n' "${missing[@]}" | sort -u)

  if pid="$(our_pid)"; then
    say "dockerd $pid (ours) is running but does not answer yet; waiting for it"
  else
    say "starting dockerd (log: $log_file)"
    # dockerd starts and later stops its own containerd. setsid: its own session, so a Ctrl-C
    # in the calling terminal does not kill it half-way; `stop` ends it by pid.
    setsid dockerd --pidfile "$state_dir/dockerd.self.pid" >"$log_file" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$pid_file"
  fi

  local deadline=$((SECONDS + start_timeout))
  until daemon_answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      say "dockerd exited before answering; last lines of its log:"
      tail -n 30 "$log_file" >&2 || true
      rm -f "$pid_file"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      say "dockerd did not answer within ${start_timeout}s; last lines of its log:"
      tail -n 30 "$log_file" >&2 || true
      return 1
    fi
    sleep 0.5
  done
  say "daemon answers: $(docker info --format 'server {{.ServerVersion}}, storage {{.Driver}}, cgroup {{.CgroupVersion}}')"
}

stop() {
  local pid
  if ! pid="$(our_pid)"; then
    say "no dockerd started by this script is running; nothing to stop"
    rm -f "$pid_file"
    return 0
  fi
  say "stopping dockerd $pid"
  kill -TERM "$pid"
  local deadline=$((SECONDS + stop_timeout))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      say "dockerd $pid still running after ${stop_timeout}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      # A killed dockerd cannot stop the containerd it started: end that one too (by its pid file).
      local cpid
      cpid="$(cat /var/run/docker/containerd/containerd.pid 2>/dev/null || true)"
      if [[ "$cpid" =~ ^[0-9]+$ && "$(cat "/proc/$cpid/comm" 2>/dev/null || true)" == containerd ]]; then
        kill -TERM "$cpid" 2>/dev/null || true
      fi
      break
    fi
    sleep 0.2
  done
  rm -f "$pid_file"
  say "stopped"
}

status() {
  if daemon_answers; then
    say "a daemon answers ($(docker info --format '{{.ServerVersion}}'))"
  else
    say "no daemon answers"
  fi
  if pid="$(our_pid)"; then say "started by this script: pid $pid"; else say "none started by this script"; fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *)
    echo "usage: $0 [start|stop|status]" >&2
    exit 2
    ;;
esac
