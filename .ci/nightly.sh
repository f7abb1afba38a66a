# Sourced by the nightly checks (.ci/stages/fuzz.sh, .ci/stages/miri.sh, .ci/stages/tsan.sh):
# the one nightly they all use, pinned in fuzz/rust-toolchain.toml, and the
# components a check names. Installs nothing (the install stage does): a
# missing toolchain or component stops the check, naming the command.
# Usage: . .ci/nightly.sh [component...]; then cargo "+$NIGHTLY" ...
NIGHTLY=$(sed -n 's/^channel = "\(.*\)"$/\1/p' fuzz/rust-toolchain.toml)
if [ -z "$NIGHTLY" ]; then
  echo "no channel in fuzz/rust-toolchain.toml" >&2
  exit 1
fi
if ! rustup run "$NIGHTLY" rustc -V >/dev/null 2>&1; then
  echo "no $NIGHTLY (rustup toolchain install $NIGHTLY --profile minimal, or bash .ci/run install)" >&2
  exit 1
fi
for component in "$@"; do
  if ! rustup component list --toolchain "$NIGHTLY" --installed | grep "^$component" >/dev/null; then
    echo "no $component for $NIGHTLY (rustup component add --toolchain $NIGHTLY $component, or bash .ci/run install)" >&2
    exit 1
  fi
done
export NIGHTLY
