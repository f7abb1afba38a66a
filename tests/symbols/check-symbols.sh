#!/usr/bin/env bash
# The libraries export weir's API and nothing else:
#  - the static archive defines no global symbol but weir_*;
#  - the shared library exports exactly the functions weir.h declares.
#   check-symbols.sh STATIC_ARCHIVE SHARED_LIBRARY HEADER
set -uo pipefail
archive=$1 shared=$2 header=$3
passed=0 failed=0
pass() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAILED: $1"; failed=$((failed + 1)); }

# Functions the header declares: `type name(` at the start of a line; not
# the `extern` ones the firmware SDK defines, nor the firmware build's
# weir_hosted_only_* stubs.
declared=$(grep -v '^extern ' "$header" | sed -nE 's/^[a-z_][a-z0-9_ ]*[ *](weir_[a-z0-9_]+)\(.*/\1/p' \
  | grep -v '^weir_hosted_only_' | sort -u)

others=$(nm -g --defined-only "$archive" 2>/dev/null | awk 'NF == 3 {print $3}' | grep -v '^weir_' | sort -u)
count=$(printf '%s' "$others" | grep -c . || true)
if [ "$count" -eq 0 ]; then
  pass "$archive defines only weir_* globals"
else
  fail "$archive defines $count globals that are not weir_*, e.g.:"
  printf '%s\n' "$others" | head -n 10 | sed 's/^/    /'
fi

archive_weir=$(nm -g --defined-only "$archive" 2>/dev/null | awk 'NF == 3 {print $3}' | grep '^weir_' | sort -u)
if [ "$archive_weir" = "$declared" ]; then
  pass "$archive defines every function weir.h declares ($(printf '%s\n' "$declared" | wc -l))"
else
  fail "$archive's weir_* globals differ from weir.h's functions:"
  diff <(printf '%s\n' "$declared") <(printf '%s\n' "$archive_weir") | head -n 10 | sed 's/^/    /'
fi

exported=$(nm -D -g --defined-only "$shared" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u)
if [ "$exported" = "$declared" ]; then
  pass "$shared exports exactly weir.h's $(printf '%s\n' "$declared" | wc -l) functions"
else
  fail "$shared's exports differ from weir.h's functions (< header, > library):"
  diff <(printf '%s\n' "$declared") <(printf '%s\n' "$exported") | head -n 10 | sed 's/^/    /'
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
