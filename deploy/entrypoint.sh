#!/bin/bash
# The image's entrypoint: which role this container plays (see deploy/Containerfile).
set -euo pipefail
mode="${1:-http}"
[ $# -gt 0 ] && shift
case "$mode" in
  http)
    # One workspace per container; every interface, since the port is published or behind a Service.
    exec dsh-terminal-mcp --http "${DSH_LISTEN:-0.0.0.0:8080}" --cwd "${DSH_WORKSPACE:-/workspace}" "$@"
    ;;
  target)
    # PID 1 of an exec target: stays up, reaps orphans, exits on TERM at once.
    trap 'exit 0' TERM INT
    while :; do sleep 86400 & wait $! || true; done
    ;;
  session-host)
    exec dsh-session-host --stdio "$@"
    ;;
  *)
    exec "$mode" "$@"
    ;;
esac
