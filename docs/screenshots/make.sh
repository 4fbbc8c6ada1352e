#!/usr/bin/env bash
# Regenerate the screenshots from the test fixture (not part of the tests).
# Needs chromium (apt-get install -y chromium), LibreOffice Calc and poppler for the workbook
# (apt-get install -y libreoffice-calc-nogui poppler-utils fonts-crosextra-carlito: Carlito has
# Calibri's metrics, so the columns wrap as in Excel) and the project's .venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
.venv/bin/python - "$tmp" <<'PY'
import re
import sys
from pathlib import Path

sys.path.insert(0, ".")
from recon.report.chart import volume_chart_png
from recon.report.html import render_report
from recon.report.workbook import render_workbook
from tests.unit.report_fixtures import report_input

out = Path(sys.argv[1])
data = report_input()
html = render_report(data, row_cap=200, chart_png=volume_chart_png(data.payouts, data.timezone))
(out / "report.html").write_text(html, encoding="utf-8")
# The Needs action section alone, with the page's own styles.
section = re.search(r"<section>\s*<h2>Needs action</h2>.*?</section>", html, re.S)
body = re.search(r"(<body[^>]*>).*(</body>)", html, re.S)
assert section and body, "report.html has no Needs action section"
needs = html[: body.start(1)] + body.group(1) + section.group(0) + body.group(2)
(out / "needs-action.html").write_text(needs, encoding="utf-8")
(out / "report.xlsx").write_bytes(render_workbook(data))
PY
shot() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$(mktemp -d -p "$tmp")" \
    --screenshot="$tmp/$1" --window-size="$2" "file://$tmp/$3" 2>/dev/null
}
shot report-desktop.png 1280,2600 report.html
shot report-phone.png 390,4800 report.html
shot needs-action-desktop.png 1280,1600 needs-action.html
shot needs-action-phone.png 390,4000 needs-action.html
# The workbook's Needs action sheet as LibreOffice prints it: its two pages side by side (the
# sheet is fitted two pages wide; Summary is page 1).
soffice "-env:UserInstallation=file://$tmp/profile" --headless --convert-to pdf \
  --outdir "$tmp" "$tmp/report.xlsx" >/dev/null 2>&1
pdftotext -f 2 -l 2 "$tmp/report.pdf" - | head -1 | grep -qx exception_id
pdftoppm -r 110 -f 2 -l 3 -png "$tmp/report.pdf" "$tmp/sheet"
.venv/bin/python - "$tmp" <<'PY'
import sys
from pathlib import Path

from PIL import Image, ImageChops

tmp = Path(sys.argv[1])


def trimmed(image: Image.Image, margin: int = 16, keep_width: bool = False) -> Image.Image:
    """``image`` without the blank (its bottom-left corner's colour) below and right of its
    content; ``keep_width``: only below (a page's width is what the screenshot shows)."""
    blank = Image.new(image.mode, image.size, image.getpixel((0, image.height - 1)))
    box = ImageChops.difference(image, blank).getbbox()
    if box is None:
        return image
    right = image.width if keep_width else min(image.width, box[2] + margin)
    return image.crop((0, 0, right, min(image.height, box[3] + margin)))


pages = [trimmed(Image.open(p).convert("RGB")) for p in sorted(tmp.glob("sheet-*.png"))]
# The second page's columns continue the first's: its left margin is cut, a grey rule between.
margin = pages[0].getbbox() and ImageChops.invert(pages[0]).getbbox()
left_edge = margin[0] if margin else 0
rest = [p.crop((left_edge, 0, p.width, p.height)) for p in pages[1:]]
width = pages[0].width + sum(p.width + 3 for p in rest)
sheet = Image.new("RGB", (width, max(p.height for p in pages)), "white")
sheet.paste(pages[0], (0, 0))
left = pages[0].width
for page in rest:
    sheet.paste(Image.new("RGB", (1, sheet.height), "#999999"), (left + 1, 0))
    sheet.paste(page, (left + 3, 0))
    left += page.width + 3
sheet.save("docs/screenshots/workbook-needs-action.png", optimize=True)
for name in ("report-desktop", "report-phone"):
    Image.open(tmp / f"{name}.png").save(f"docs/screenshots/{name}.png", optimize=True)
for name in ("needs-action-desktop", "needs-action-phone"):
    image = Image.open(tmp / f"{name}.png").convert("RGB")
    trimmed(image, keep_width=True).save(f"docs/screenshots/{name}.png", optimize=True)
PY


# The morning read: the top of the demo's second night, a real double payment first and
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

# The report over the demo's two brands (two provider accounts): the top (the account filter, the
# morning's count and the money at stake over both) and each account's own section, at desktop
# and phone width.
.venv/bin/python - "$page" "$tmp/accounts.html" <<'PY'
import re
import sys
from pathlib import Path

html = Path(sys.argv[1]).read_text(encoding="utf-8")
body = re.search(r"(<body[^>]*>)(.*)(</body>)", html, re.S)
accounts = re.findall(r'<section class="account" id="account-[^"]+">.*?</section>', html, re.S)
assert body and len(accounts) == 2, "report.html has no section for each of the two accounts"
top = body.group(2)[: body.group(2).index("<section")]
page = html[: body.start(1)] + body.group(1) + top + "".join(accounts) + body.group(3)
Path(sys.argv[2]).write_text(page, encoding="utf-8")
PY
cat >"$tmp/accounts-phone.html" <<HTML
<!DOCTYPE html><html><body style="margin:0">
<iframe src="file://$tmp/accounts.html" width="390" height="9000" style="border:0;display:block"></iframe>
</body></html>
HTML
morning accounts-desktop.png 1280,3600 "$tmp/accounts.html"
morning accounts-phone.png 390,9000 "$tmp/accounts-phone.html"
.venv/bin/python - <<'PY'
from PIL import Image, ImageChops

# Without the blank below the page's end (the window is taller than the page).
for name in ("accounts-desktop", "accounts-phone"):
    path = f"docs/screenshots/{name}.png"
    image = Image.open(path).convert("RGB")
    blank = Image.new(image.mode, image.size, image.getpixel((0, image.height - 1)))
    box = ImageChops.difference(image, blank).getbbox()
    if box is not None:
        image = image.crop((0, 0, image.width, min(image.height, box[3] + 16)))
    image.save(path, optimize=True)
PY

# The roll-forward of the same night, a statement per currency: its section alone, with the
# page's own styles, and the workbook's Statement sheet (the last) as LibreOffice prints it.
.venv/bin/python - "$page" "$tmp/rollforward.html" <<'PY'
import re
import sys
from pathlib import Path

html = Path(sys.argv[1]).read_text(encoding="utf-8")
section = re.search(r"<section[^>]*>\s*<h2>Roll-forward</h2>.*?</section>", html, re.S)
body = re.search(r"(<body[^>]*>).*(</body>)", html, re.S)
assert section and body, "report.html has no Roll-forward section"
page = html[: body.start(1)] + body.group(1) + section.group(0) + body.group(2)
Path(sys.argv[2]).write_text(page, encoding="utf-8")
PY
cat >"$tmp/rollforward-phone.html" <<HTML
<!DOCTYPE html><html><body style="margin:0">
<iframe src="file://$tmp/rollforward.html" width="390" height="2400" style="border:0;display:block"></iframe>
</body></html>
HTML
morning rollforward-desktop.png 1280,1100 "$tmp/rollforward.html"
morning rollforward-phone.png 390,2400 "$tmp/rollforward-phone.html"
soffice "-env:UserInstallation=file://$tmp/profile" --headless --convert-to pdf \
  --outdir "$tmp/demo" "$tmp/demo/report/report.xlsx" >/dev/null 2>&1
# The Statement sheet is the workbook's last: its one page is the PDF's last.
pages=$(pdfinfo "$tmp/demo/report.pdf" | awk '/^Pages:/ {print $2}')
pdftotext -f "$pages" -l "$pages" "$tmp/demo/report.pdf" - | grep -q "Settled now"
pdftoppm -r 110 -f "$pages" -l "$pages" -png -singlefile "$tmp/demo/report.pdf" \
  docs/screenshots/workbook-statement
