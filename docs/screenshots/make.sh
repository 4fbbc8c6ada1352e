#!/usr/bin/env bash
# Regenerate the report screenshots from the test fixture (not part of the tests).
# Needs chromium (apt-get install -y chromium) and the project's .venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
.venv/bin/python - "$tmp/report.html" <<'PY'
import sys
from pathlib import Path

sys.path.insert(0, ".")
from recon.report.chart import volume_chart_png
from recon.report.html import render_report
from tests.unit.report_fixtures import report_input

data = report_input()
html = render_report(data, row_cap=200, chart_png=volume_chart_png(data.payouts, data.timezone))
Path(sys.argv[1]).write_text(html, encoding="utf-8")
PY
shot() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$(mktemp -d -p "$tmp")" \
    --screenshot="docs/screenshots/$1" --window-size="$2" "file://$tmp/report.html"
}
shot report-desktop.png 1280,2600
shot report-phone.png 390,4800
