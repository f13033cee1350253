#!/bin/sh
# Check the service's alerting rules with promtool: the rules' syntax (promtool check rules) and
# their behaviour on made-up series (promtool test rules, deploy/prometheus/alerts.test.yaml).
# The rules live in deploy/k8s/prometheusrule.yaml, a PrometheusRule; its `spec` is a plain
# rules file, written to a temporary folder beside a copy of the tests. Run from the project
# root (make check does). PROMTOOL names promtool (default: promtool on PATH); PYTHON names a
# Python with PyYAML (default: .venv/bin/python, else python3).
set -eu

PROMTOOL=${PROMTOOL:-promtool}
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
RULE=deploy/k8s/prometheusrule.yaml
TESTS=deploy/prometheus/alerts.test.yaml

if ! command -v "$PROMTOOL" >/dev/null 2>&1; then
    echo "check-rules.sh: promtool not found ('$PROMTOOL'); install it with" \
        "'apt-get install prometheus' (Debian, Ubuntu) or set PROMTOOL to its path" >&2
    exit 1
fi
for file in "$RULE" "$TESTS"; do
    if [ ! -f "$file" ]; then
        echo "check-rules.sh: $file not found; run this from the project root" >&2
        exit 1
    fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sizing-rules.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# The test file names this file in rule_files, relative to itself.
"$PYTHON" - "$RULE" "$work/sizing.rules.yaml" <<'EOF'
import sys

import yaml

source, target = sys.argv[1], sys.argv[2]
with open(source, encoding="utf-8") as f:
    documents = [d for d in yaml.safe_load_all(f) if d]
rules = [d for d in documents if d.get("kind") == "PrometheusRule"]
if len(rules) != 1 or not isinstance(rules[0].get("spec"), dict):
    sys.exit(f"{source}: expected one PrometheusRule with a spec, found {len(rules)}")
with open(target, "w", encoding="utf-8") as f:
    yaml.safe_dump(rules[0]["spec"], f, sort_keys=False, allow_unicode=True, width=1000)
EOF
cp "$TESTS" "$work/alerts.test.yaml"

"$PROMTOOL" check rules "$work/sizing.rules.yaml"
"$PROMTOOL" test rules "$work/alerts.test.yaml"
