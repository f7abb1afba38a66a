#!/usr/bin/env bash
# Kept because other files name this path: runs the stage in
# .ci/stages/counts.sh through .ci/run, which checks its needs
# first (the same as `bash .ci/run counts`). A long form's
# variables pass through.
exec bash "$(dirname "$0")/run" counts
