#!/bin/sh
# Starts the sizing service under gunicorn. A PROMETHEUS_MULTIPROC_DIR that is set (the image
# and the Kubernetes pod set it) belongs to this one instance: the folder where each worker
# writes its metric samples must exist and be empty before any worker starts, or a restarted
# pod would report the previous run's counts, so it is emptied here. Unset, gunicorn's master
# makes a fresh folder of its own and removes it on exit (deploy/gunicorn.conf.py), so two
# instances on one host neither share nor wipe each other's metrics.
set -eu
if [ -n "${PROMETHEUS_MULTIPROC_DIR:-}" ]; then
    export PROMETHEUS_MULTIPROC_DIR
    rm -rf "$PROMETHEUS_MULTIPROC_DIR"
    mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
fi
here=$(dirname "$0")
exec "${GUNICORN:-gunicorn}" --config "$here/gunicorn.conf.py" "$@"
