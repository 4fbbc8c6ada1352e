"""Which payout `recon show` means: exact ids and references win, near ones are only offered."""

from __future__ import annotations

from recon.ops.lookup import choose
from recon.store.lookup import Hit, HitKind

PAYOUT = Hit(HitKind.TRANSACTION_ID, "tx-23", "tx-23")
REFERENCE = Hit(HitKind.REFERENCE, "demo-00023", "tx-23")
OTHER = Hit(HitKind.REFERENCE, "demo-00024", "tx-24")
RETURN = Hit(HitKind.RETURN_ID, "ret-9", "tx-23")


def test_a_reference_finds_its_payout_and_says_how() -> None:
    """demo-00023 is tx-23's merchant_reference: found, by reference."""
    found = choose("demo-00023", [PAYOUT, REFERENCE, OTHER])
    assert found.found == "tx-23"
    assert found.via == REFERENCE


def test_spaces_around_what_was_typed_are_ignored() -> None:
    """A leading space pasted from a spreadsheet does not hide the payout."""
    assert choose("  demo-00023 ", [REFERENCE]).found == "tx-23"


def test_a_return_id_finds_the_payout_it_returned() -> None:
    """The return's original payout is shown."""
    assert choose("ret-9", [RETURN]).found == "tx-23"


def test_another_case_is_offered_never_assumed() -> None:
    """DEMO-00023 finds nothing; the message asks whether demo-00023 was meant."""
    found = choose("DEMO-00023", [REFERENCE, OTHER])
    assert found.found is None
    assert found.suggestions[0] == "demo-00023"
    assert "did you mean demo-00023" in found.message()


def test_a_near_miss_suggests_the_closest_ids_and_references() -> None:
    """One digit off: both references are suggested, the closest first."""
    found = choose("demo-0023", [PAYOUT, REFERENCE, OTHER])
    assert found.found is None
    assert found.suggestions[:2] == ("demo-00023", "demo-00024")


def test_nothing_close_says_so_without_suggestions() -> None:
    """No candidates: the plain message, nothing offered."""
    found = choose("zzz", [])
    assert found.suggestions == ()
    assert found.message() == "no payout, reference or return id 'zzz' in the store"


def test_an_exception_id_is_pointed_to_the_exceptions_history() -> None:
    """E3-1 is no payout: the message says which command shows it (a balance break has no
    payout to show)."""
    assert choose("E3-1", []).message() == (
        "no payout, reference or return id 'E3-1' in the store; an exception id: "
        "recon exceptions history E3-1"
    )


def test_a_reference_two_payouts_share_names_both_and_shows_neither() -> None:
    """A reused merchant_reference is ambiguous: each payout is named, none chosen."""
    twin = Hit(HitKind.REFERENCE, "demo-00023", "tx-99")
    found = choose("demo-00023", [REFERENCE, twin])
    assert found.found is None
    assert [h.payout_id for h in found.ambiguous] == ["tx-23", "tx-99"]
    assert "names 2 payouts" in found.message()


def test_an_id_names_its_own_item_before_a_return_that_carries_the_same_id() -> None:
    """A forged return's id the provider also named: the provider-side item is shown."""
    item = Hit(HitKind.PROVIDER_ID, "ret-9", "ret-9")
    assert choose("ret-9", [RETURN, item]).found == "ret-9"
