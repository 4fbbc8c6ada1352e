"""People work the exception queue over three nights on SQLite, PostgreSQL, MariaDB.

Night 1 finds: four ids the provider does not know, an amount that differs from the record and a
stale payout. Then a person acknowledges one unknown id, resolves another, snoozes a third until
the day after night 2, acknowledges the amount mismatch, and tries two bad commands (which change
nothing). Night 2 (a day later): the ids are the same; acknowledged and snoozed ones are not
counted as needing action; the resolution is listed once; the amount mismatch, whose payout has
settled since (another state), is back as new with the earlier acknowledgement beside it.
Night 3 (two days later): the snooze has ended; the resolution is no longer listed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.run_support import (
    Spec,
    create_payouts,
    explain,
    import_payouts,
    read_csv,
    recon,
    recon_env,
    run_night,
    served_world,
)

ZONE = "Europe/Stockholm"
UNKNOWN = ("ghost-ack", "ghost-resolve", "ghost-snooze", "ghost-open")


def _rows(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["transaction_id"], r["exception"]): r for r in read_csv(out / "exceptions.csv")}


def test_acknowledge_resolve_snooze_and_reopen_across_three_nights(
    empty_db_url: str, tmp_path: Path
) -> None:
    """Over three nights a person acknowledges, resolves, snoozes and reopens through the CLI."""
    with served_world(empty_db_url, receiver=False) as world:
        env = recon_env(empty_db_url, world.sandbox_url, timezone=ZONE)
        amount, stale = create_payouts(world, [Spec("300.00"), Spec("64.00")])
        records = [
            amount.csv_row(amount="300.50"),
            stale.csv_row(created=f"{stale.created.timestamp() - 5 * 86400:.3f}"),
            *(
                amount.csv_row(transaction_id=i, merchant_reference=f"ref-{i}", amount="10.00")
                for i in UNKNOWN
            ),
        ]
        import_payouts(env, tmp_path, records)

        first = _rows(run_night(env, tmp_path, "night1", world.now()))
        ids = {key: row["exception_id"] for key, row in first.items()}
        assert all(ids.values())
        assert len(set(ids.values())) == len(ids)
        assert all(r["status"] == "new" for r in first.values())
        mismatch = ids[(amount.transaction_id, "amount_mismatch")]

        def act(*args: str) -> str:
            result = recon(env, "exceptions", *args, cwd=tmp_path)
            assert result.returncode == 0, explain(result)
            return result.stdout

        snooze_until = datetime.now(UTC).astimezone(ZoneInfo(ZONE)).date() + timedelta(days=2)
        act("ack", ids[("ghost-ack", "unknown_transaction")], "--note", "asking support",
            "--by", "anna")  # fmt: skip
        act("resolve", ids[("ghost-resolve", "unknown_transaction")], "--note", "a test id",
            "--by", "olof")  # fmt: skip
        act("snooze", ids[("ghost-snooze", "unknown_transaction")], "--until",
            snooze_until.isoformat(), "--note", "bank answers Friday", "--by", "maria")  # fmt: skip
        act("ack", mismatch, "--note", "provider correcting", "--by", "anna")

        # All or nothing: one unknown id in the command, and nothing of it is applied.
        bad = recon(env, "exceptions", "ack", ids[("ghost-open", "unknown_transaction")],
                    "E999-9", "--note", "x", cwd=tmp_path)  # fmt: skip
        assert bad.returncode == 2, explain(bad)
        assert "E999-9" in bad.stderr
        assert "nothing was changed" in bad.stderr
        past = recon(env, "exceptions", "snooze", ids[("ghost-open", "unknown_transaction")],
                     "--until", "2020-01-01", "--note", "x", cwd=tmp_path)  # fmt: skip
        assert past.returncode == 2, explain(past)
        assert "not in the future" in past.stderr
        listed = act("list", "--format", "csv")
        assert "ghost-open" in listed
        assert "ghost-resolve" not in listed

        world.advance(86400)
        second = _rows(run_night(env, tmp_path, "night2", world.now()))
        for key, exception_id in ids.items():
            if key[0] != "ghost-resolve" and key[0] != amount.transaction_id:
                assert second[key]["exception_id"] == exception_id, key
        assert second[("ghost-ack", "unknown_transaction")]["status"] == "acknowledged"
        assert second[("ghost-ack", "unknown_transaction")]["owner"] == "anna"
        assert second[("ghost-snooze", "unknown_transaction")]["status"] == "snoozed"
        assert second[("ghost-snooze", "unknown_transaction")]["until"].startswith(
            snooze_until.isoformat()
        )
        resolved = second[("ghost-resolve", "unknown_transaction")]
        assert (resolved["status"], resolved["owner"], resolved["note"]) == (
            "resolved", "olof", "a test id"
        )  # fmt: skip
        assert second[("ghost-open", "unknown_transaction")]["status"] == "persisting"
        reopened = second[(amount.transaction_id, "amount_mismatch")]
        assert reopened["status"] == "new", reopened
        assert reopened["exception_id"] == mismatch
        assert "acknowledged by anna" in reopened["previous_resolution"]
        assert "provider correcting" in reopened["previous_resolution"]
        html = (tmp_path / "night2" / "report.html").read_text()
        # Needs action: the open unknown id, the reopened mismatch, the stale payout.
        need = sum(r["status"] in ("new", "persisting") for r in second.values())
        assert re.search(rf"\b{need} problems? needs? action", html), need
        assert "Acknowledged" in html
        assert "Resolved since the previous run" in html

        world.advance(2 * 86400)
        third = _rows(run_night(env, tmp_path, "night3", world.now()))
        assert ("ghost-resolve", "unknown_transaction") not in third
        back = third[("ghost-snooze", "unknown_transaction")]
        assert back["status"] == "persisting"
        assert back["owner"] == ""
        assert "snoozed by maria" in back["previous_resolution"]
        assert third[("ghost-ack", "unknown_transaction")]["status"] == "acknowledged"

        history = act("history", ids[("ghost-snooze", "unknown_transaction")])
        assert "maria snooze (open -> snoozed)" in history
        assert "recon snooze_ended (snoozed -> open)" in history
        closed = recon(env, "exceptions", "ack", ids[("ghost-resolve", "unknown_transaction")],
                       "--note", "again", cwd=tmp_path)  # fmt: skip
        assert closed.returncode == 2, explain(closed)
        assert "closed" in closed.stderr


@pytest.mark.parametrize("db", ["sqlite"])
def test_show_tells_a_payouts_whole_story(db: str, tmp_path: Path) -> None:
    """`recon show` lists the record, each answer, each change and the exceptions with actions."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        env = recon_env(database_url, world.sandbox_url, timezone=ZONE)
        (payout,) = create_payouts(world, [Spec("300.00")])
        import_payouts(env, tmp_path, [payout.csv_row(amount="300.50")], name="p.csv")
        first = _rows(run_night(env, tmp_path, "n1", world.now()))
        exception_id = first[(payout.transaction_id, "amount_mismatch")]["exception_id"]
        ack = recon(env, "exceptions", "ack", exception_id, "--note", "looking", "--by", "anna",
                    cwd=tmp_path)  # fmt: skip
        assert ack.returncode == 0, explain(ack)
        world.advance(86400)
        run_night(env, tmp_path, "n2", world.now())
        shown = recon(env, "show", "--", payout.transaction_id, cwd=tmp_path)
    assert shown.returncode == 0, explain(shown)
    text = shown.stdout
    assert f"Payout {payout.transaction_id}" in text
    assert "Answers (2):" in text
    assert "-> settled" in text
    assert f"{exception_id} Amount differs from the record" in text
    assert "anna acknowledge: looking" in text
    assert "300.50 EUR" in text  # the record's amount as money
    assert "provider 300.00 EUR" in text  # the finding's detail as money
    assert "minor units" not in text
    missing = recon(env, "show", "no-such-id", cwd=tmp_path)
    assert missing.returncode == 2
    assert "no payout, reference or return id 'no-such-id'" in missing.stderr
    # Finance has the merchant_reference: found through it, a pasted space trimmed.
    by_reference = recon(env, "show", f" {payout.reference}", cwd=tmp_path)
    assert by_reference.returncode == 0, explain(by_reference)
    assert f"Payout {payout.transaction_id}" in by_reference.stdout
    assert f"(merchant_reference {payout.reference})" in by_reference.stdout
    # Another case is offered, never assumed.
    shouted = recon(env, "show", payout.reference.upper(), cwd=tmp_path)
    assert shouted.returncode == 2
    assert f"did you mean {payout.reference}" in shouted.stderr


def _fill(workbook: Path, sheet: str, answers: dict[str, tuple[str, str]], out: Path) -> Path:
    """Fill `resolution` and `note` of the rows named in ``answers`` (by exception_id), as a person
    would in Excel, and save the workbook as ``out``."""
    import openpyxl

    book = openpyxl.load_workbook(workbook)
    rows = book[sheet].iter_rows()
    header = [c.value for c in next(rows)]
    at = {name: header.index(name) for name in ("exception_id", "resolution", "note")}
    for row in rows:
        answer = answers.get(str(row[at["exception_id"]].value))
        if answer is not None:
            row[at["resolution"]].value, row[at["note"]].value = answer
    book.save(out)
    return out


def test_the_mailed_workbook_goes_back_through_apply(tmp_path: Path) -> None:
    """A run writes report.xlsx; a person fills `resolution` in its Exceptions sheet; `recon
    exceptions apply` applies it all, or nothing when one row is bad; the next run shows it."""
    database_url = f"sqlite:///{tmp_path / 'recon.db'}"
    with served_world(database_url, receiver=False) as world:
        env = recon_env(database_url, world.sandbox_url, timezone=ZONE)
        (payout,) = create_payouts(world, [Spec("100.10")])
        rows = [
            payout.csv_row(transaction_id=i, merchant_reference=f"ref-{i}", amount="10.00")
            for i in ("ghost-1", "ghost-2", "ghost-3")
        ]
        import_payouts(env, tmp_path, rows, name="p.csv")
        night1 = run_night(env, tmp_path, "night1", world.now())
        ids = {k[0]: r["exception_id"] for k, r in _rows(night1).items()}
        answers = {
            ids["ghost-1"]: ("acknowledge", "asking the provider"),
            ids["ghost-2"]: ("resolve", "a test id"),
        }
        bad = _fill(night1 / "report.xlsx", "Exceptions",
                    {**answers, ids["ghost-3"]: ("forget", "")}, tmp_path / "bad.xlsx")  # fmt: skip
        refused = recon(env, "exceptions", "apply", str(bad), "--by", "anna", cwd=tmp_path)
        assert refused.returncode == 2, explain(refused)
        assert "forget" in refused.stderr
        listed = recon(env, "exceptions", "list", "--format", "json", cwd=tmp_path).stdout
        assert '"state": "acknowledged"' not in listed  # nothing of the bad file was applied

        good = _fill(night1 / "report.xlsx", "Exceptions", answers, tmp_path / "filled.xlsx")
        applied = recon(env, "exceptions", "apply", str(good), "--by", "anna", cwd=tmp_path)
        assert applied.returncode == 0, explain(applied)
        assert "2 exceptions changed" in applied.stdout

        world.advance(86400)
        night2 = _rows(run_night(env, tmp_path, "night2", world.now()))
    assert night2[("ghost-1", "unknown_transaction")]["status"] == "acknowledged"
    assert night2[("ghost-1", "unknown_transaction")]["note"] == "asking the provider"
    assert night2[("ghost-2", "unknown_transaction")]["status"] == "resolved"
    assert night2[("ghost-2", "unknown_transaction")]["owner"] == "anna"
    assert night2[("ghost-3", "unknown_transaction")]["status"] == "persisting"
