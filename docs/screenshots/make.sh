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

# The morning read (issue 26): the top of the demo's second night, a real double payment first and
# tonight's failed payouts right after Needs action. Chromium's headless window is not narrower
# than ~500 px, so the phone shot lays the page in a 390 px iframe.
.venv/bin/recon demo --dir "$tmp/demo" >/dev/null
page="$tmp/demo/report/report.html"
cat >"$tmp/phone.html" <<HTML
<!DOCTYPE html><html><body style="margin:0">
<iframe src="file://$page" width="390" height="4400" style="border:0;display:block"></iframe>
</body></html>
HTML
morning() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --allow-file-access-from-files --hide-scrollbars --user-data-dir="$(mktemp -d -p "$tmp")" \
    --screenshot="docs/screenshots/$1" --window-size="$2" "file://$3"
}
morning morning-read-desktop.png 1280,2000 "$page"
morning morning-read-phone.png 390,4400 "$tmp/phone.html"
