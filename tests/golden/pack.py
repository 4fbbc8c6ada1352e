"""A night's report pack as stable text: the files the run wrote, the workbook's cell values, the
mail it sent, its exit; with the few wall-clock values that cannot be pinned masked (``MASKS``).

What is compared, per night (``tests/golden/<scenario>/night-NN/``):

- every CSV and report.html the run wrote, as written (masked);
- chart.png, byte for byte (matplotlib's PNG of the same figure is the same bytes);
- report.xlsx as ``report.xlsx.txt``: every sheet's cell values, one row a line (a workbook's
  bytes carry a creation time and zip metadata; its formatting is not compared);
- the email the run sent (to an SMTP server on loopback): ``email.txt`` (subject, attachments' names
  and the text body) and ``email.html`` (the HTML body, its stylesheet inlined);
- ``run.txt``: the exit code, the run's status and its summary line (with several accounts: each
  account's night's);
- with several accounts, each account's own pack in ``NAME/`` beside the pack over them all.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import date, datetime, time
from email.message import EmailMessage
from pathlib import Path

import openpyxl

# The values a replay cannot pin. The wall clock (``datetime.now``) is pinned while each night runs,
# so started, finished and checked times are compared as they are; what is left is measured on
# the performance counter (how long the run and its polling took, and the request rates that
# follow), and the Content-ID the mailer draws at random for the chart. Each pattern keeps its
# words and masks only the value.
MASKS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    # report.html's footer (and the mailed HTML): "Run 2: …, took 1.0 s, 318 requests (1,070.6/s)"
    ("run duration", re.compile(r"(, took )[\d,]+\.\d s"), r"\1<s> s"),
    ("request rate", re.compile(r"( requests \()[\d,]+\.\d/s\)"), r"\1<n>/s)"),
    # run.txt's summary line: "polled 317 in 0.9s (352 req/s; …); total 1.0s"
    ("poll time", re.compile(r"(polled \d+ in )[\d,]+\.\ds"), r"\1<s>s"),
    ("poll rate", re.compile(r"\([\d,]+ req/s"), "(<n> req/s"),
    ("total time", re.compile(r"(; total )[\d,]+\.\ds"), r"\1<s>s"),
    # the mail's HTML: the chart's Content-ID, drawn at random by email.utils.make_msgid
    ("chart cid", re.compile(r"cid:[^\"'\s)>]+"), "cid:<chart>"),
)


def mask(text: str) -> str:
    """``text`` with every volatile value of ``MASKS`` replaced by its placeholder."""
    for _, pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


def _cell(value: object) -> str:
    if isinstance(value, datetime | date | time):
        return f"{type(value).__name__}({value.isoformat()})"
    return json.dumps(value, ensure_ascii=False)


def workbook_text(path: Path) -> str:
    """Every sheet's cell values, one row a line, types kept (``1`` is not ``"1"``)."""
    book = openpyxl.load_workbook(path, data_only=True)
    lines: list[str] = []
    for sheet in book.worksheets:
        lines.append(f"== {sheet.title} ({sheet.max_row} rows x {sheet.max_column} columns)")
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            lines.append(f"{number}: [{', '.join(_cell(v) for v in row)}]")
    return "\n".join(lines) + "\n"


def mail_texts(message: EmailMessage) -> tuple[str, str]:
    """The mail as two texts: subject, attachments and plain body; and the HTML body."""
    plain = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    names = [part.get_filename() or "?" for part in message.iter_attachments()]
    head = f"Subject: {message['Subject']}\nAttachments: {', '.join(names)}\n\n"
    text = plain.get_content() if isinstance(plain, EmailMessage) else "(no text part)\n"
    body = html.get_content() if isinstance(html, EmailMessage) else "(no html part)\n"
    return head + str(text), str(body)


def collect(
    report_dir: Path,
    pack_dir: Path,
    *,
    mails: list[EmailMessage],
    run_text: str | None,
) -> None:
    """Write the night's pack (see the module docstring) into ``pack_dir``."""
    pack_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(report_dir.iterdir()):
        if path.is_dir():  # an account's own pack, beside the pack over every account
            collect(path, pack_dir / path.name, mails=[], run_text=None)
            continue
        if path.suffix in (".csv", ".html"):
            (pack_dir / path.name).write_text(
                mask(path.read_text(encoding="utf-8")), encoding="utf-8"
            )
        elif path.suffix == ".xlsx":
            (pack_dir / f"{path.name}.txt").write_text(workbook_text(path), encoding="utf-8")
        elif path.suffix == ".png":
            shutil.copyfile(path, pack_dir / path.name)
        else:
            raise AssertionError(f"the run wrote a file the golden pack does not know: {path}")
    for number, message in enumerate(mails, start=1):
        suffix = "" if number == 1 else f"-{number}"
        text, html = mail_texts(message)
        (pack_dir / f"email{suffix}.txt").write_text(mask(text), encoding="utf-8")
        (pack_dir / f"email{suffix}.html").write_text(mask(html), encoding="utf-8")
    if run_text is not None:  # None: an account's own pack, its night told in the run's run.txt
        (pack_dir / "run.txt").write_text(mask(run_text), encoding="utf-8")
