#!/usr/bin/env bash
# A Go module proxy in a directory: this checkout's go/ folder served as the
# module github.com/weir-rs/weir/go at the version include/weir.h gives,
# the way a public proxy serves a module, for GOPROXY=file://DIR until the
# module is on a public proxy (docs/go.md, Installing).
#
#   go/mkproxy.sh DIR     writes DIR/github.com/weir-rs/weir/go/@v/ (list,
#                         .info, .mod, .zip) and prints the version
#
# The zip holds every file of go/ under module@version/, leaving out nested
# modules (a folder with its own go.mod, such as bench/) and folders whose
# names start with "." or "_". A version's content is fixed once a module
# cache holds it: after changing go/, clear that cache (go clean -modcache)
# before fetching it again. Needs python3 (for the zip).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: go/mkproxy.sh DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
version=v$(sed -n 's/^#define WEIR_VERSION "\(.*\)"/\1/p' "$root/include/weir.h")
module=github.com/weir-rs/weir/go
dir=$1/$module/@v
mkdir -p "$dir"
printf '%s\n' "$version" >"$dir/list"
printf '{"Version":"%s"}\n' "$version" >"$dir/$version.info"
cp "$root/go/go.mod" "$dir/$version.mod"
python3 - "$root/go" "$dir/$version.zip" "$module@$version" <<'PY'
import os, sys, zipfile
src, out, prefix = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for d, dirs, files in os.walk(src):
        rel = os.path.relpath(d, src)
        if rel != "." and "go.mod" in files:
            dirs[:] = []
            continue
        dirs[:] = sorted(x for x in dirs if not x.startswith((".", "_")))
        for f in sorted(files):
            p = os.path.normpath(os.path.join(rel, f))
            z.write(os.path.join(d, f), prefix + "/" + p)
PY
echo "$version"
