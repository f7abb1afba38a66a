#!/usr/bin/env bash
# about: every fenced block of README.md and docs/*.md as a reader copies it: run against a fresh prefix, checked, or marked with why not
# tier: full
# order: 85
# needs-commands: cargo cmake=cmake cc=gcc c++=g++ pkg-config=pkg-config python3=python3 go=golang-go
# needs-commands: nginx=nginx curl=curl dpkg-buildflags=dpkg-dev make=make redis-server=redis-server redis-cli=redis-server
# needs-commands: arm-none-eabi-gcc=gcc-arm-none-eabi qemu-system-arm=qemu-system-arm
# needs-apt: nginx-dev
# needs-rust-targets: thumbv7em-none-eabihf thumbv6m-none-eabi
#
# Docs that run: every block a reader copies from README.md and the guides
# in docs/ is run as written, or checked, or says why not. The runner is
# .ci/doc_blocks.py (Python 3, standard library only); its first lines are
# the reference. In short, the comment lines right above a fence say what
# the block is:
#
#   (none)                       a ```sh or ```bash block: run by
#                                `bash -euo pipefail` in a fresh empty
#                                directory outside the repository
#   <!-- run: from-checkout -->  the same, from the checkout's root
#   <!-- file: PATH -->          the repository's file PATH, byte for byte
#   <!-- output -->              what the run block above it prints (its
#                                lines appear in that block's standard
#                                output; a line `...` is any lines)
#   <!-- run-by: STAGE... -->    those stages run it (the test suite, a
#                                sanitizer build): each must exist
#   <!-- illustrative: WHY -->   not run, and why
#
# A block in any other language with none of these fails, as does a
# marker that does not fit its block. A program or a config a reader saves
# is written by the shell block that uses it, as a heredoc
# (cat > main.go <<'EOF' ... EOF), so that one copy runs it; a ```c block
# on its own is a file of the repository (<!-- file: -->) that a shell
# block after it builds.
#
# weir is installed once, into a new temporary PREFIX (exported): docs/c.md
# goes first, and its install block is the first block run. Blocks that
# start a server (nginx, redis-server) start it on 127.0.0.1 and stop it
# as the guide does; the runner is the subreaper of all a block starts, so
# a server left running fails its block and is killed. A block's output is
# shown when it fails. Ends with "N passed, N failed", one per block run or
# checked.
#
# `python3 .ci/doc_blocks.py --check README.md docs/*.md` checks the
# markers, the files and the stages in a second, running nothing;
# `--list` prints what each block is.
set -uo pipefail
cd "$(dirname "$0")/../.."

scratch=$(mktemp -d "${TMPDIR:-/tmp}/weir-doc-prefix.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export PREFIX="$scratch/prefix"

python3 .ci/doc_blocks.py docs/c.md README.md docs/*.md
