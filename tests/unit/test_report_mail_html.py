"""The mailed HTML: styles inlined on every element, so a client that drops <style>
(Outlook's Word renderer, several webmails) shows what was tested; the chart inline only."""

from __future__ import annotations

import re
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path

from recon.report.mail import build_message, mail_html
from recon.report.pack import write_pack
from recon.resources import reports_dir
from recon.settings import Settings
from tests.unit.report_fixtures import report_input


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of <style> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)


def styled_subjects() -> list[tuple[str, frozenset[str]]]:
    """The (tag or "", classes) of the element each rule of the basic layout (outside @media)
    styles: the last compound of each selector with a class (``.badge.new``, ``td.num``)."""
    css = (reports_dir() / "report.css").read_text(encoding="utf-8")
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    basic = re.split(r"@media", css)[0]
    subjects = []
    for selectors in re.findall(r"([^{}]+)\{", basic):
        for selector in selectors.split(","):
            last = selector.split()[-1]
            match = re.fullmatch(r"([a-z0-9]*)((?:\.[a-z_][a-z0-9_-]*)+)", last)
            if match:
                subjects.append((match[1], frozenset(match[2].strip(".").split("."))))
    return subjects


def message(tmp_path: Path) -> EmailMessage:
    data = report_input()
    files = write_pack(tmp_path, data, row_cap=200)
    settings = Settings(mail_from="recon@example.test", mail_to=["ops@example.test"])
    return build_message(settings, files, data)


def mailed_html(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


def test_every_styled_element_of_the_mailed_html_carries_its_style(tmp_path: Path) -> None:
    """Each element with a class the stylesheet styles has a style attribute, and so do the
    tables, cells and headings: the layout does not depend on a <style> block."""
    parser = Elements()
    parser.feed(mailed_html(message(tmp_path)))
    subjects = styled_subjects()
    assert ("", frozenset({"card"})) in subjects
    assert ("", frozenset({"badge", "new"})) in subjects

    def styled(tag: str, classes: set[str]) -> bool:
        return any((not t or t == tag) and c <= classes for t, c in subjects)

    unstyled = [
        (tag, attrs.get("class"))
        for tag, attrs in parser.tags
        if (styled(tag, set((attrs.get("class") or "").split())) or tag in {"table", "th", "td"})
        and not attrs.get("style")
    ]
    assert unstyled == []
    body = next(attrs for tag, attrs in parser.tags if tag == "body")
    assert "font" in (body.get("style") or "")


def test_the_mailed_html_keeps_only_media_queries_in_its_style_block(tmp_path: Path) -> None:
    """What stays in <style> is only what cannot be inlined (@media: phone cards, print), an
    enhancement for clients that read it; nothing of the basic layout is left there."""
    parser = Elements()
    parser.feed(mailed_html(message(tmp_path)))
    leftover = re.sub(r"/\*.*?\*/", "", "".join(parser.styles), flags=re.S)
    outside_media = re.sub(r"@media[^{]*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", "", leftover)
    assert outside_media.strip() == ""


def test_no_basic_layout_uses_flex_or_grid(tmp_path: Path) -> None:
    """Cards are inline-blocks and tables: mail clients strip flex and grid."""
    html = mailed_html(message(tmp_path))
    assert not re.search(r"display:\s*(inline-)?(flex|grid)", html)


def test_the_file_keeps_its_style_block_and_the_mail_inlines(tmp_path: Path) -> None:
    """report.html is the page with one <style>; the mailed HTML is the same report inlined."""
    data = report_input()
    files = write_pack(tmp_path, data, row_cap=200)
    assert "<style>" in files.html.read_text(encoding="utf-8")
    page = "<html><head><style>p { color: red }</style></head><body><p>x</p></body></html>"
    inlined = mail_html(page)
    assert 'style="color: red' in inlined


def test_the_chart_is_inline_and_not_an_attachment(tmp_path: Path) -> None:
    """The chart part is Content-Disposition inline (with its Content-ID), not attachment."""
    msg = message(tmp_path)
    (image,) = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    assert image.get_content_disposition() == "inline"
    assert image["Content-ID"]


def test_the_mailed_body_stops_each_table_at_the_mail_row_cap(tmp_path: Path) -> None:
    """RECON_MAIL_ROW_CAP rows per table in the body, with the line saying where the rest is; the
    attached report.html keeps RECON_REPORT_ROW_CAP."""
    data = report_input()
    files = write_pack(tmp_path, data, row_cap=200)
    settings = Settings(
        mail_from="recon@example.test", mail_to=["ops@example.test"], mail_row_cap=2
    )
    html = mailed_html(build_message(settings, files, data))
    needs = html.split("Needs action</h2>")[1].split("</table>")[0]
    assert needs.count("<tr") == 3  # the header and two rows
    assert "Showing 2 of 7 rows; 5 more are in exceptions.csv." in html
    page = files.html.read_text(encoding="utf-8")
    assert "more are in exceptions.csv" not in page
