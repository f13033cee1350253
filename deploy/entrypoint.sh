#!/bin/sh
# Starts the sizing service under gunicorn. Owns PROMETHEUS_MULTIPROC_DIR: the folder where
# each worker writes its metric samples must exist and be empty before any worker starts,
# or a restarted pod would report the previous run's counts.
set -eu
: "${PROMETHEUS_MULTIPROC_DIR:=${TMPDIR:-/tmp}/sizing-metrics}"
export PROMETHEUS_MULTIPROC_DIR
rm -rf "$PROMETHEUS_MULTIPROC_DIR"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
here=$(dirname "$0")
exec "${GUNICORN:-gunicorn}" --config "$here/gunicorn.conf.py" "$@"
