#!/usr/bin/env bash
# The console's production tree, installed by the Debian package as /usr/lib/tide/console:
#   release-tree.sh OUT_DIR      (OUT_DIR must not exist, or be empty)
# after `npm run build -w @tide/console` and `npm run build -w @tide/tidectl`. OUT_DIR then holds
#   tide-console.mjs         the command (serve, migrate, create-admin, setup-postgres), bundled
#   bin/tide-console         the shell wrapper (the package installs it as /usr/bin/tide-console)
#   apps/console/            Next's standalone app: .next (server build + static assets), package.json
#   node_modules/            what Next traced the server to need (next, react, Prisma's client, pg, …)
#   prisma/migrations/       what `tide-console migrate` applies
#   tidectl.js               the tidectl bundle (CommonJS: no package.json in OUT_DIR says otherwise)
#   tidectl-chunks/          its command groups' code (.cjs), required when a command runs
#   VERSION
# It runs on Debian's node alone: no npm, tsx, Prisma CLI, compiler or repository (the console's
# release-tree.integration-test.ts runs it with the repository hidden).
set -euo pipefail

die() {
  echo "release-tree: $*" >&2
  exit 1
}

[[ $# -eq 1 ]] || die "usage: release-tree.sh OUT_DIR"
app_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo_root="$(cd "$app_dir/../.." && pwd)"
standalone="$app_dir/.next/standalone"
build_hint="run: npm run build -w @tide/console && npm run build -w @tide/tidectl"

[[ -f $standalone/apps/console/server.js ]] || die "no standalone build in $standalone; $build_hint"
[[ -f $app_dir/dist/tide-console.mjs ]] || die "no $app_dir/dist/tide-console.mjs; $build_hint"
[[ -f $repo_root/apps/tidectl/dist/tidectl.js ]] || die "no apps/tidectl/dist/tidectl.js; $build_hint"
build_id="$(cat "$app_dir/.next/BUILD_ID")"
[[ $build_id == "$(cat "$standalone/apps/console/.next/BUILD_ID")" ]] ||
  die "the standalone output is not from the last build; $build_hint"

out="$1"
if [[ -e $out ]]; then
  [[ -d $out && -z "$(ls -A "$out")" ]] || die "$out exists and is not an empty directory"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"
case "$out/" in "$repo_root"/*) die "OUT_DIR must be outside the repository ($repo_root)" ;; esac

# -a keeps the relative symlinks Next made for its hashed external names (.next/node_modules).
cp -a "$standalone/." "$out/"
# tide-console serve is the one server (server/serve.ts): no second way to start the console.
rm "$out/apps/console/server.js"
cp -a "$app_dir/.next/static" "$out/apps/console/.next/static"
if [[ -d $app_dir/public ]]; then cp -a "$app_dir/public" "$out/apps/console/public"; fi

cp "$app_dir/dist/tide-console.mjs" "$out/tide-console.mjs"
install -D -m 755 "$app_dir/bin/tide-console" "$out/bin/tide-console"
mkdir -p "$out/prisma"
cp -a "$repo_root/prisma/migrations" "$out/prisma/migrations"
cp "$repo_root/apps/tidectl/dist/tidectl.js" "$out/tidectl.js"
cp -a "$repo_root/apps/tidectl/dist/tidectl-chunks" "$out/tidectl-chunks" # loaded on demand by tidectl.js
chmod 755 "$out/tidectl.js"
version="$(node -p 'require(process.argv[1]).version' "$app_dir/package.json")"
commit="$(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
printf 'tide-console %s (commit %s, Next build %s)\n' "$version" "$commit" "$build_id" >"$out/VERSION"

# What the runtime never reads: source maps, type declarations, Next's trace lists, and Prisma's
# runtimes for other databases and engines (~57 MB; Next traces the whole folder): the generated
# client (.prisma/client) loads runtime/client.js and its own Wasm query compiler, nothing else.
find "$out/node_modules/@prisma/client/runtime" -type f ! -name client.js -delete
find "$out" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
  -o -name '*.nft.json' \) -delete

# Self-contained: every symlink resolves inside the tree.
while IFS= read -r -d '' link; do
  target="$(readlink -f "$link")" || die "broken symlink $link"
  case "$target" in "$out"/*) ;; *) die "symlink $link points outside the tree ($target)" ;; esac
done < <(find "$out" -type l -print0)

# Root's files, readable by the service's user (the package installs them as they are).
chmod -R u=rwX,go=rX "$out"

echo "release-tree: $out ($(cat "$out/VERSION"))"
du -sh --apparent-size "$out" | sed 's/^/release-tree: size /'
(cd "$out" && du -s --apparent-size --block-size=1K node_modules/* node_modules/@*/* apps tide-console.mjs tidectl.js prisma 2>/dev/null |
  sort -rn | head -8 | awk '{ printf "release-tree:   %6.1f MB  %s\n", $1 / 1024, $2 }')
