"""What the night's payouts cost: each payout's fee beside the agreed one, and the totals.

Read from the report's payouts (:data:`recon.report.model.FEE_COLUMNS`): the provider's fee, the
agreed fee and the entry that priced it. A fee is money out, added to the payout: a payout of
100.00 with a fee of 0.50 costs 100.50. Amounts stay integer minor units until a renderer writes
them.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pandas as pd

from recon.constants import SETTLED_OUTCOMES
from recon.report.model import ACCOUNT, FEE_COLUMNS, ReportInput, once_per_report
from recon.words import money

_SETTLED = [o.value for o in SETTLED_OUTCOMES]
_BPS_STEP = Decimal("0.01")


def _with_fees(payouts: pd.DataFrame) -> pd.DataFrame:
    """The payouts with the fee columns (absent ones <NA>: a run that knew no fees)."""
    missing = {c: pd.Series(pd.NA, index=payouts.index, dtype=object) for c in FEE_COLUMNS
               if c not in payouts.columns}  # fmt: skip
    return payouts.assign(**missing) if missing else payouts


@once_per_report
def fee_rows(data: ReportInput) -> pd.DataFrame:
    """One row per payout with a fee charged or an agreed fee, by transaction id: the account,
    the payout, ``fee_minor``, ``fee_expected_minor``, ``difference_minor`` (charged less agreed;
    <NA> without an agreed fee; no fee charged counts 0), ``fee_id``, ``fee_entry``. Once per
    report (fees.csv and the totals read it): not to be changed."""
    p = _with_fees(data.payouts)
    charged = p["fee_minor"].astype("Int64")
    expected = p["fee_expected_minor"].astype("Int64")
    rows = p[(charged.notna() | expected.notna()).to_numpy(dtype=bool)]
    charged, expected = charged[rows.index], expected[rows.index]
    return (
        pd.DataFrame(
            {
                "provider_account": rows[ACCOUNT].astype(object),
                "transaction_id": rows["transaction_id"].astype(object),
                "merchant_reference": rows["merchant_reference"].astype(object),
                "currency": rows["currency"].astype(object),
                "amount_minor": rows["amount_minor"].astype("Int64"),
                "outcome": rows["outcome"].astype(object),
                "fee_id": rows["fee_id"].astype(object),
                "fee_minor": charged,
                "fee_expected_minor": expected,
                "difference_minor": (charged.fillna(0) - expected).astype("Int64"),
                "fee_entry": rows["fee_entry"].astype(object),
                "created": rows["created"],
            }
        )
        .sort_values(["provider_account", "transaction_id"], kind="stable")
        .reset_index(drop=True)
    )


def money_out_minor(amount_minor: int, fee_minor: int | None) -> int:
    """What a payout costs: its amount and its fee (a fee is never an offset)."""
    return amount_minor + (fee_minor or 0)


@once_per_report
def fee_totals(data: ReportInput) -> pd.DataFrame:
    """Per account and currency with any fee: payouts settled (count, amount), fees charged, fees
    agreed and the difference over the payouts an entry prices (fees.csv's rows; None where no
    entry prices the currency's payouts), what the settled payouts cost with their fees
    (``money_out_minor``) and the effective rate in basis points (fees charged over the amount
    settled; "" when none settled). Once per report (the workbook's Summary and the HTML show
    them): not to be changed."""
    rows = fee_rows(data)
    p = data.payouts
    out = []
    keys = rows[["provider_account", "currency"]].dropna().drop_duplicates()
    order = {a: n for n, a in enumerate(data.accounts)}  # the accounts in the report's order
    for account, currency in sorted(
        keys.itertuples(index=False, name=None), key=lambda k: (order.get(k[0], len(order)), k)
    ):
        mine = rows[(rows["currency"] == currency) & (rows["provider_account"] == account)]
        in_currency = p[
            (
                (p["currency"].astype(object) == currency) & (p[ACCOUNT].astype(object) == account)
            ).to_numpy(dtype=bool)
        ]
        settled = in_currency[in_currency["outcome"].astype(object).isin(_SETTLED).to_numpy()]
        settled_minor = int(settled["amount_minor"].astype("Int64").fillna(0).sum())
        charged = int(mine["fee_minor"].fillna(0).sum())
        priced = mine["fee_expected_minor"].notna()
        expected = int(mine["fee_expected_minor"][priced].sum()) if priced.any() else None
        # The rows' own differences: a fee on a payout no entry prices is charged, not over.
        difference = int(mine["difference_minor"][priced].sum()) if priced.any() else None
        rate = (
            (Decimal(charged) * 10000 / Decimal(settled_minor)).quantize(
                _BPS_STEP, rounding=ROUND_HALF_EVEN
            )
            if settled_minor
            else None
        )
        out.append(
            {
                "provider_account": account,
                "currency": currency,
                "settled_count": len(settled),
                "settled_minor": settled_minor,
                "charged_minor": charged,
                "expected_minor": expected,
                "difference_minor": difference,
                "money_out_minor": money_out_minor(settled_minor, charged),
                "rate_bps": "" if rate is None else str(rate),
            }
        )
    columns = ["provider_account", "currency", "settled_count", "settled_minor", "charged_minor",
               "expected_minor", "difference_minor", "money_out_minor", "rate_bps"]  # fmt: skip
    money_columns = ("settled_minor", "charged_minor", "expected_minor", "difference_minor",
                     "money_out_minor")  # fmt: skip
    return pd.DataFrame(out, columns=columns).astype(dict.fromkeys(money_columns, "Int64"))


def fee_lines(data: ReportInput) -> list[tuple[str, str]]:
    """Per currency, the fee totals in words for the workbook's Summary: (label, sentence)."""
    return [
        (
            f"Fees {t['currency']}",
            f"{t['settled_count']:,} payouts settled, {money(t['settled_minor'], t['currency'])};"
            f" fees charged {money(t['charged_minor'], t['currency'])}"
            + (
                f", agreed {money(t['expected_minor'], t['currency'])}, difference"
                f" {money(t['difference_minor'], t['currency'])}"
                if not pd.isna(t["expected_minor"])
                else ", no agreed price"
            )
            + f"; settled with fees"
            f" {money(t['money_out_minor'], t['currency'])}"
            + (f"; effective rate {t['rate_bps']} bp" if t["rate_bps"] else "")
            + f" (account {data.label(str(t['provider_account']))})",
        )
        for t in fee_totals(data).to_dict("records")
    ]


def fee_table(data: ReportInput) -> list[dict[str, str]]:
    """The fee totals as report.html shows them: amounts with their currency."""
    return [
        {
            "account": data.label(str(t["provider_account"])),
            "currency": str(t["currency"]),
            "settled_count": f"{t['settled_count']:,}",
            "settled": money(t["settled_minor"], t["currency"]),
            "charged": money(t["charged_minor"], t["currency"]),
            "expected": _or_dash(t["expected_minor"], t["currency"]),
            "difference": _or_dash(t["difference_minor"], t["currency"]),
            "money_out": money(t["money_out_minor"], t["currency"]),
            "rate": f"{t['rate_bps']} bp" if t["rate_bps"] else "-",
        }
        for t in fee_totals(data).to_dict("records")
    ]


def _or_dash(minor: object, currency: str) -> str:
    """An amount with its currency, "-" where there is none (no agreed price)."""
    return "-" if minor is None or pd.isna(minor) else money(int(minor), currency)  # type: ignore[call-overload]
