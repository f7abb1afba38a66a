#!/usr/bin/env bash
# Code size of the firmware build, for README.md's "Firmware" table: for each
# function of the firmware library, the flash (text + data) a program gains
# by calling it, on Cortex-M4F and Cortex-M0, linked with arm-none-eabi-gcc
# -Os -ffunction-sections -fdata-sections -Wl,--gc-sections against
# libweir.a built by the firmware stage (bash .ci/run firmware first). Each program is the
# example's startup plus one reference to the function; the baseline
# program references none, and the table gives the difference. A function's
# figure includes the library code only it pulls in (shared helpers are
# counted in each), so the row "all of them" is less than the sum. Then a
# row per handle type: every function of that type at once.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${CARGO_TARGET_DIR:-target}/firmware-example
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The firmware build's functions: what its library defines.
functions=$(arm-none-eabi-nm -g --defined-only "$out/m0/libweir.a" 2>/dev/null |
  awk '$2 == "T" && $3 ~ /^weir_/ {print $3}' | sort -u)
if [ -z "$functions" ]; then
  echo "no firmware library in $out: run bash .ci/run firmware first" >&2
  exit 1
fi

flash() { # cpu-flags lib source
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $1 -std=c99 -ffreestanding -nostdlib -Os -ffunction-sections \
    -fdata-sections -DWEIR_FREESTANDING -Iinclude -Ic-examples/firmware "$3" \
    c-examples/firmware/startup.c -Lc-examples/firmware -Tmicrobit.ld \
    -Wl,--gc-sections -Wl,-z,noexecstack "$2" -lgcc -o "$tmp/p.elf"
  arm-none-eabi-size "$tmp/p.elf" | awk 'NR == 2 {print $1 + $2}'
}

program() { # names...
  {
    echo '#include "weir.h"'
    echo 'typedef void (*any_fn)(void);'
    echo 'any_fn volatile weir_size_keep[] = {(any_fn)0'
    for name in "$@"; do echo ", (any_fn)$name"; done
    echo '};'
    echo 'void board_tick(void) {}'
    echo 'int main(void) { return weir_size_keep[0] != 0; }'
  } >"$tmp/p.c"
  echo "$tmp/p.c"
}

m4="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
m0="-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"
base4=$(flash "$m4" "$out/m4/libweir.a" "$(program)")
base0=$(flash "$m0" "$out/m0/libweir.a" "$(program)")

echo "| function | Cortex-M4F (bytes) | Cortex-M0 (bytes) |"
echo "|---|---:|---:|"
for name in $functions; do
  s4=$(flash "$m4" "$out/m4/libweir.a" "$(program "$name")")
  s0=$(flash "$m0" "$out/m0/libweir.a" "$(program "$name")")
  echo "| \`$name\` | $((s4 - base4)) | $((s0 - base0)) |"
done
# One row per handle type: a program that calls all of a type's functions
# (what a firmware image that uses the type's whole face adds).
for type in breaker shedder bucket gate window sliding period budget concurrency pool lease bloom; do
  these=$(grep "^weir_${type}_" <<<"$functions" || true)
  [ -n "$these" ] || continue
  # shellcheck disable=SC2086
  s4=$(flash "$m4" "$out/m4/libweir.a" "$(program $these)")
  # shellcheck disable=SC2086
  s0=$(flash "$m0" "$out/m0/libweir.a" "$(program $these)")
  echo "| every \`weir_${type}_*\` | $((s4 - base4)) | $((s0 - base0)) |"
done
# shellcheck disable=SC2086
s4=$(flash "$m4" "$out/m4/libweir.a" "$(program $functions)")
# shellcheck disable=SC2086
s0=$(flash "$m0" "$out/m0/libweir.a" "$(program $functions)")
echo "| all of them | $((s4 - base4)) | $((s0 - base0)) |"
echo "(baseline program without weir: $base4 bytes on M4F, $base0 on M0)"
