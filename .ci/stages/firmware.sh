#!/usr/bin/env bash
# about: the firmware library on Cortex-M4F and Cortex-M0 under qemu-system-arm: core builds, clippy per lock, four example runs (every placed handle type), critical-section lengths on both, the conformance traces on both, lock and header checks
# tier: full
# order: 150
# needs-commands: cargo arm-none-eabi-gcc=gcc-arm-none-eabi qemu-system-arm=qemu-system-arm python3=python3
# needs-rust-targets: thumbv7em-none-eabihf thumbv6m-none-eabi
# needs-rust-components: clippy
#
# The firmware build, run: builds libweir.a without std for Cortex-M4F
# (thumbv7em-none-eabihf) and Cortex-M0 (thumbv6m-none-eabi), links the
# firmware example (c-examples/firmware/) against each with arm-none-eabi-gcc
# -nostdlib, and runs it under qemu-system-arm on mps2-an386 (M4) and
# microbit (M0): each with interrupts masked around word updates (feature
# single-core), the M4 again with a spinlock taken with interrupts masked
# (feature privileged), and the M0 again with the SDK's critical section
# (feature sdk-critical-section, the example defining the two hooks).
# Every handle type runs from static memory in each, a breaker shared with
# the SysTick handler. Then c-examples/firmware/cycles.c on the M4 and the
# M0 (SDK hooks, which time the critical section itself) under -icount:
# each handle type's longest call and critical section in instructions,
# and its footprint (docs/firmware.md's table).
# Each run prints its checks and exits (semihosting SYS_EXIT_EXTENDED) with
# its failure count. Then the conformance traces (traces/README.md) on both
# cores: c-examples/firmware/trace_table.py compiles every trace the face
# (firmware-m4, firmware-m0) does not skip in traces/skips.txt into a const
# table in flash, and c-examples/firmware/traces.c replays it through the
# library (the handles placed in a static arena) and prints a line per
# trace, exiting with the number that failed; each core runs its images
# (the words' traces, the handles', the keyed table's). Closes with "N passed, N failed" over all checks (a trace is one check).
#
# Needs: rustup targets thumbv7em-none-eabihf and thumbv6m-none-eabi; Debian
# packages gcc-arm-none-eabi and qemu-system-arm (the install stage's).
set -euo pipefail
cd "$(dirname "$0")/../.."

target_dir=${CARGO_TARGET_DIR:-target}
out=$target_dir/firmware-example
mkdir -p "$out"

# The core crate builds for both targets, with and without an allocator, and
# the firmware C crate is lint-clean under every lock (host clippy never
# sees these cfgs).
for target in thumbv7em-none-eabihf thumbv6m-none-eabi; do
  echo "== weir-core for $target"
  cargo build --locked -p weir-core --no-default-features --target "$target"
  cargo build --locked -p weir-core --no-default-features --features alloc --target "$target"
done
for build in thumbv7em-none-eabihf:single-core thumbv7em-none-eabihf:privileged \
  thumbv6m-none-eabi:single-core thumbv6m-none-eabi:sdk-critical-section; do
  echo "== clippy, firmware build ${build%%:*} (${build##*:})"
  cargo clippy --locked -p weir --lib --no-default-features --features "${build##*:}" \
    --target "${build%%:*}" -- -D warnings
done

# The library: a staticlib only (cargo rustc --crate-type), since the crate's
# cdylib cannot be built for these targets.
library() { # target features dest
  echo "== libweir.a for $1 ($2)"
  cargo rustc --locked -p weir --lib --crate-type staticlib --profile firmware \
    --target "$1" --no-default-features --features "$2"
  mkdir -p "$(dirname "$3")"
  cp "$target_dir/$1/firmware/libweir.a" "$3"
}

cflags=(-std=c99 -ffreestanding -nostdlib -Os -ffunction-sections -fdata-sections
  -Wall -Wextra -Wpedantic -Werror -DWEIR_FREESTANDING -Iinclude)

example() { # name cpu-flags machine library extra-cflags...
  local name=$1 cpu=$2 machine=$3 lib=$4
  shift 4
  echo "== example $name: build"
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $cpu "${cflags[@]}" "$@" -DWEIR_EXAMPLE_MACHINE="\"$name\"" \
    c-examples/firmware/main.c c-examples/firmware/startup.c \
    -Lc-examples/firmware -T"$machine.ld" -Wl,--gc-sections -Wl,-z,noexecstack \
    "$lib" -lgcc -o "$out/$name.elf"
}

passed=0
failed=0
runs_failed=0
run() { # name machine [qemu options...]
  local name=$1 machine=$2 log="$out/$1.log" status=0
  shift 2
  echo "== example $name: qemu-system-arm -M $machine $*"
  timeout 60 qemu-system-arm -M "$machine" "$@" -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$out/$name.elf" \
    </dev/null >"$log" 2>&1 || status=$?
  sed "s/^/  | /" "$log"
  local line
  line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed$" "$log" || true)
  if [ -z "$line" ] || [ "$status" -ne 0 ]; then
    echo "!! $name: exit status $status${line:+ ($line)}${line:- (no closing line)}"
    runs_failed=$((runs_failed + 1))
  fi
  if [ -n "$line" ]; then
    passed=$((passed + $(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')))
  else
    failed=$((failed + 1))
  fi
}

m4="-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16"
m0="-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"

library thumbv7em-none-eabihf single-core "$out/m4/libweir.a"
library thumbv7em-none-eabihf privileged "$out/m4-privileged/libweir.a"
library thumbv6m-none-eabi single-core "$out/m0/libweir.a"
library thumbv6m-none-eabi sdk-critical-section "$out/m0-sdk/libweir.a"

example cortex-m4 "$m4" mps2-an386 "$out/m4/libweir.a"
example cortex-m4-privileged "$m4" mps2-an386 "$out/m4-privileged/libweir.a"
example cortex-m0 "$m0" microbit "$out/m0/libweir.a"
example cortex-m0-sdk "$m0" microbit "$out/m0-sdk/libweir.a" -DWEIR_EXAMPLE_SDK_CRITICAL_SECTION

run cortex-m4 mps2-an386
run cortex-m4-privileged mps2-an386
run cortex-m0 microbit
run cortex-m0-sdk microbit

# How long each handle type's calls and critical sections run
# (c-examples/firmware/cycles.c; the table in docs/firmware.md), under
# -icount so that virtual time counts instructions: shift 7 is 128 ns an
# instruction, finer than one SysTick tick on either board.
cycles() { # name cpu-flags machine library extra-cflags...
  local name=$1 cpu=$2 machine=$3 lib=$4
  shift 4
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $cpu "${cflags[@]}" "$@" -DWEIR_EXAMPLE_MACHINE="\"$name\"" \
    c-examples/firmware/cycles.c c-examples/firmware/startup.c \
    -Lc-examples/firmware -T"$machine.ld" -Wl,--gc-sections -Wl,-z,noexecstack \
    "$lib" -lgcc -o "$out/$name.elf"
  run "$name" "$machine" -icount shift=7
}
cycles cortex-m4-cycles "$m4" mps2-an386 "$out/m4/libweir.a"
cycles cortex-m0-cycles "$m0" microbit "$out/m0-sdk/libweir.a" -DWEIR_EXAMPLE_SDK_CRITICAL_SECTION

# The conformance traces, one image per core (single-core lock).
traces() { # name cpu-flags machine library face [group]
  local name=$1 cpu=$2 machine=$3 lib=$4 face=$5 group=${6:-}
  mkdir -p "$out/$name"
  echo "== traces $name: $(python3 c-examples/firmware/trace_table.py "$out/$name" "$face" $group)"
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $cpu "${cflags[@]}" -I"$out/$name" -DWEIR_EXAMPLE_MACHINE="\"$name\"" \
    c-examples/firmware/traces.c c-examples/firmware/startup.c "$out/$name/trace_table.c" \
    -Lc-examples/firmware -T"$machine.ld" -Wl,--gc-sections -Wl,-z,noexecstack \
    "$lib" -lgcc -o "$out/$name.elf"
  run "$name" "$machine"
}
# Three images on the M4, the words' traces, the handles' (with the
# bloom's) and the keyed table's, four on the M0 (the bloom's apart): the
# M0's 256 KiB of flash holds one table with its code, not two, and on the
# M4 an image of all (2.2 MB) locked up at reset under QEMU's mps2-an386,
# where images of 1.6 MB run.
traces cortex-m4-traces "$m4" mps2-an386 "$out/m4/libweir.a" firmware-m4 words
traces cortex-m4-handle-traces "$m4" mps2-an386 "$out/m4/libweir.a" firmware-m4 handles+bloom
traces cortex-m4-keyed-traces "$m4" mps2-an386 "$out/m4/libweir.a" firmware-m4 keyed
traces cortex-m0-traces "$m0" microbit "$out/m0/libweir.a" firmware-m0 words
traces cortex-m0-handle-traces "$m0" microbit "$out/m0/libweir.a" firmware-m0 handles
traces cortex-m0-bloom-traces "$m0" microbit "$out/m0/libweir.a" firmware-m0 bloom
traces cortex-m0-keyed-traces "$m0" microbit "$out/m0/libweir.a" firmware-m0 keyed

# How each build locks a word update, read off the linked programs: every
# build masks interrupts (cpsid, which the example's own code never uses
# outside the SDK hooks), and only privileged keeps portable-atomic's table
# of spinlocks.
lock_check() { # name expect-spinlocks(yes|no)
  local elf="$out/$1.elf" ok=1 code symbols
  code=$(arm-none-eabi-objdump -d "$elf")
  symbols=$(arm-none-eabi-nm "$elf")
  grep -q "cpsid" <<<"$code" || ok=0
  if grep -q "portable_atomic.*fallback.*LOCKS" <<<"$symbols"; then
    [ "$2" = yes ] || ok=0
  else
    [ "$2" = no ] || ok=0
  fi
  if [ "$ok" -eq 1 ]; then
    echo "lock check $1: interrupts masked, spinlock table: $2"
    passed=$((passed + 1))
  else
    echo "!! lock check $1: expected interrupts masked, spinlock table: $2"
    failed=$((failed + 1))
  fi
}
lock_check cortex-m4 no
lock_check cortex-m4-privileged yes
lock_check cortex-m0 no

# One header for hosts and firmware: it compiles in both modes as C99 and
# C++11 with the strict flags, and in firmware mode a host-only call is a
# compile error that names the reason.
header_check() { # description expect(ok|refused) compiler flags...
  local what=$1 expect=$2 log="$out/header.log"
  shift 2
  local status=0
  printf '#include "weir.h"\nint use(void);\nint use(void) { return (int)%s; }\n' \
    "$HEADER_CALL" >"$out/header.c"
  "$@" -Wall -Wextra -Wpedantic -Werror -Iinclude -c "$out/header.c" -o "$out/header.o" \
    >"$log" 2>&1 || status=$?
  if { [ "$expect" = ok ] && [ "$status" -eq 0 ]; } ||
    { [ "$expect" = refused ] && [ "$status" -ne 0 ] &&
      grep -q "needs the hosted weir library" "$log"; }; then
    echo "header check $what: $expect"
    passed=$((passed + 1))
  else
    cat "$log"
    echo "!! header check $what: expected $expect"
    failed=$((failed + 1))
  fi
}
for cpu in cortex-m4 cortex-m0; do
  HEADER_CALL="weir_words_shareable()"
  header_check "$cpu c99 hosted" ok arm-none-eabi-gcc -mcpu=$cpu -mthumb -std=c99 -ffreestanding
  header_check "$cpu c99 freestanding" ok arm-none-eabi-gcc -mcpu=$cpu -mthumb -std=c99 \
    -ffreestanding -DWEIR_FREESTANDING
  header_check "$cpu c++11 freestanding" ok arm-none-eabi-g++ -x c++ -mcpu=$cpu -mthumb \
    -std=c++11 -ffreestanding -DWEIR_FREESTANDING
  HEADER_CALL="weir_bloom_footprint(4)"
  header_check "$cpu host-only call" refused arm-none-eabi-gcc -mcpu=$cpu -mthumb -std=c99 \
    -ffreestanding -DWEIR_FREESTANDING
done

echo "firmware: $runs_failed of 13 runs failed"
echo "$passed passed, $failed failed"
[ "$runs_failed" -eq 0 ] && [ "$failed" -eq 0 ]
