"""What ``make demo`` prints of a night's roll-forward: its statement, a line per currency and
part, and the findings' line, as the report gives them; rollforward.csv is beside the report.
"""

from __future__ import annotations

from pathlib import Path

from recon.report.model import ReportInput
from recon.report.rollforward import findings_words, statement


def roll_forward_lines(data: ReportInput, report_dir: Path) -> list[str]:
    """``roll-forward (…/rollforward.csv holds every line):`` then ``EUR in flight: 121
    (151,961.20) − 121 settled (151,961.20) = 0 (0.00)`` and so on, for ``data`` (over every
    account, per currency: amounts never add across currencies)."""
    out = [f"roll-forward ({report_dir / 'rollforward.csv'} holds every line):"]
    for part in statement(data):
        code = part["currency"]
        sections: dict[str, list[str]] = {}
        for line in part["lines"]:
            amount = str(line["amount"]).removesuffix(f" {code}")  # the line names the currency
            said = f"{line['count']:,} ({amount})"
            if not line["total"]:
                said = f"{line['count']:,} {line['words']} ({amount})"
            if line["sign"]:
                said = f"{line['sign']} {said}"
            if "no change" in line["words"]:
                said += ", no change"
            sections.setdefault(line["section"], []).append(said)
        for section, parts in sections.items():
            out.append(f"  {code} {section.replace('_', ' ')}: " + " ".join(parts))
    found = findings_words(data)
    if found:
        out.append(f"  findings: {found}")
    return out
