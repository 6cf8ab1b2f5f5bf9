#!/usr/bin/env bash
# Build the dsh-terminal image from this checkout (after `pnpm install && pnpm build`):
#   deploy/build-image.sh [podman|docker] [tag] [extra build args…]
# e.g. deploy/build-image.sh podman localhost/dsh-terminal:dev --build-arg BASE=localhost/my-node20-base
set -euo pipefail
engine="${1:-podman}"
tag="${2:-localhost/dsh-terminal:latest}"
shift $(( $# < 2 ? $# : 2 ))
here="$(cd "$(dirname "$0")" && pwd)"
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
"$here/../node_modules/.bin/tsx" "$here/context.ts" "$context"
"$engine" build -f "$here/Containerfile" -t "$tag" "$@" "$context"
echo "built $tag"
