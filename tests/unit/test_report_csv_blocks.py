"""payouts.csv is rendered in blocks of rows, so a million payouts never need one huge array."""

from __future__ import annotations

import pytest

from recon.report import csvpack
from tests.unit.report_fixtures import many_payouts, report_input


def test_a_payouts_csv_rendered_in_blocks_equals_one_rendered_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Splitting into blocks (one header, rows in order) changes no byte of payouts.csv."""
    data = report_input(payouts=many_payouts(1_003))
    whole = csvpack.payouts_csv(data)
    monkeypatch.setattr(csvpack, "BLOCK_ROWS", 100)
    blocks = csvpack.payouts_csv(data)
    assert blocks == whole
    assert blocks.count(b"transaction_id,provider_account,merchant_reference") == 1
    assert blocks.count(b"\n") == 1_004


def test_an_empty_payouts_csv_still_has_its_header() -> None:
    """No payouts: the file is the header line alone."""
    data = report_input(payouts=many_payouts(0))
    assert csvpack.payouts_csv(data) == (",".join(csvpack.PAYOUTS_COLUMNS) + "\n").encode()
