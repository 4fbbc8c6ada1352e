"""``recon show``: one payout as finance finds it and reads it.

What was typed is looked up as a transaction id, a merchant_reference, a return's id or an id the
provider named that the record lacks, equal first (:func:`find_payout`); no match suggests the
closest (:mod:`recon.ops.lookup`). The
payout then reads in words: amounts with their currency, states by name, findings labelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, select

from recon.constants import DEFAULT_ACCOUNT
from recon.errors import InputError
from recon.ops.findings import _decided, _terminal, _when
from recon.ops.lookup import Lookup, choose
from recon.report.details import case_detail, change_note
from recon.store.cases import case_actions, cases_of_items
from recon.store.db import schema_engine
from recon.store.lookup import HitKind, exact_hits, near_hits
from recon.store.provider_items import item_record
from recon.store.tables import notifications, observations, outcome_history, payouts, run_returns
from recon.words import flag_words, money, state_name, type_name


def show_text(
    database_url: str, typed: str, *, zone: ZoneInfo, account: str = DEFAULT_ACCOUNT
) -> str:
    """``recon show ID_OR_REFERENCE``: the record, every answer and change, returns,
    notifications, exceptions with their resolutions."""
    text = typed.strip()
    if not text:
        raise InputError("recon show: give a transaction id, a merchant_reference or a return id")
    with schema_engine(database_url) as engine, engine.connect() as conn:
        found = find_payout(conn, text, account=account)
        if found.found is None:
            raise InputError(found.message())
        via = found.via
        lines = []
        if via is not None and via.kind not in (HitKind.TRANSACTION_ID, HitKind.PROVIDER_ID):
            lines.append(f"({via.kind} {via.value})")
        record = conn.execute(
            select(payouts).where(
                payouts.c.provider_account == account, payouts.c.transaction_id == found.found
            )
        ).first()
        if record is None:
            return _terminal([*lines, *_item_lines(conn, found.found, zone, account)])
        return _terminal([*lines, *_payout_lines(conn, record, zone, account)])


def find_payout(conn: Connection, typed: str, *, account: str = DEFAULT_ACCOUNT) -> Lookup:
    """The payout of ``account`` ``typed`` names: the ids and references equal to it first, and
    only when none is, those near it, to suggest."""
    text = typed.strip()
    found = choose(text, exact_hits(conn, text, account=account))
    if found.found is None and not found.ambiguous:
        found = choose(text, near_hits(conn, text, account=account))
    return found


def _answers(conn: Connection, transaction_id: str, account: str) -> list[Any]:
    """Every stored answer about ``transaction_id``, oldest first."""
    o = observations.c
    query = select(
        o.run_id,
        o.fetched_at,
        o.status,
        o.state,
        o.type,
        o.amount,
        o.currency,
        o.error_code,
        o.error,
        o.fee_amount_minor,
        o.fee_id,
    )
    mine = o.provider_account == account
    return list(conn.execute(query.where(mine, o.transaction_id == transaction_id).order_by(o.id)))


def _payout_lines(conn: Connection, p: Any, zone: ZoneInfo, account: str) -> list[str]:
    payout_id = str(p.transaction_id)
    answers = _answers(conn, payout_id, account)
    h = outcome_history.c
    changes = conn.execute(
        select(
            h.run_id,
            h.changed_at,
            h.previous_outcome,
            h.outcome,
            h.state,
            h.exceptions,
            h.fee_minor,
            h.fee_id,
        )
        .where(h.provider_account == account, h.transaction_id == payout_id)
        .order_by(h.id)
    ).all()
    r = run_returns.c
    returns = conn.execute(
        select(r.run_id, r.return_id, r.amount_minor, r.currency, r.confirmed, r.notified)
        .where(r.provider_account == account, r.original_id == payout_id)
        .order_by(r.run_id, r.return_id)
    ).all()
    notes = _notes(conn, payout_id, account)
    named = [payout_id, *{str(x.return_id) for x in returns}]
    cases = cases_of_items(conn, named, account=account)
    actions = case_actions(conn, [str(c.exception_id) for c in cases])
    lines = [
        f"Payout {p.transaction_id}",
        f"  reference {p.merchant_reference} · {money(p.amount_minor, p.currency)}"
        f" · bank account {p.bank_account_id or '-'} · customer {p.customer_id or '-'}",
        f"  created {_when(p.created, zone)} · eta {_when(p.eta, zone)}"
        f" · imported {_when(p.imported_at, zone)}",
        f"  now: {p.outcome or 'not reconciled yet'}"
        + (f", provider state {state_name(p.state)}" if p.state is not None else "")
        + (f", error {p.error_code}" if p.error_code else "")
        + (f", returned {money(p.returned_minor, p.currency)}" if p.returned_minor else "")
        + (f", last checked {_when(p.last_checked_at, zone)}" if p.last_checked_at else ""),
        f"  provider's fee: {_fee(p.fee_minor, p.fee_id, p.currency) or 'none charged'}",
        f"Answers ({len(answers)}):",
        *_answer_lines(answers, zone),
        f"Changes ({len(changes)}):",
    ]
    lines += [
        f"  run {c.run_id} {_when(c.changed_at, zone)} {c.previous_outcome or '-'} -> {c.outcome}"
        + (f" (provider state {state_name(c.state)})" if c.state is not None else "")
        + (f" fee {fee}" if (fee := _fee(c.fee_minor, c.fee_id, p.currency)) else "")
        + (f" [{', '.join(map(flag_words, c.exceptions.split(';')))}]" if c.exceptions else "")
        for c in changes
    ]
    latest: dict[str, Any] = {str(x.return_id): x for x in returns}
    lines.append(f"Returns ({len(latest)}):")
    lines += [
        f"  {rid} {money(x.amount_minor, x.currency)}"
        f" · confirmed {'yes' if x.confirmed else 'no'} · notified {'yes' if x.notified else 'no'}"
        for rid, x in latest.items()
    ]
    return lines + _note_lines(notes, zone) + _case_lines(cases, actions, zone)


def _item_lines(conn: Connection, item_id: str, zone: ZoneInfo, account: str) -> list[str]:
    """An id the provider named that the record lacks."""
    item = item_record(conn, item_id, account=account)
    if item is None:  # pragma: no cover - the lookup found it a moment ago
        raise InputError(f"no payout {item_id!r} in the store")
    answers = _answers(conn, item_id, account)
    cases = cases_of_items(conn, [item_id], account=account)
    actions = case_actions(conn, [str(c.exception_id) for c in cases])
    amount = (
        money(item["amount_minor"], item["currency"])
        if item["amount_minor"] is not None
        else "no amount known"
    )
    return [
        f"Provider-side id {item_id}: not in the record (named by {item['named_by']}"
        f" on {_when(item['first_named_at'], zone)})",
        f"  now: {item['status']}"
        + (f", a {type_name(item['type'])}" if item["type"] is not None else "")
        + (f", {state_name(item['state'])}" if item["state"] is not None else "")
        + f" · {amount} · reference {item['merchant_reference'] or '-'}"
        + f" · to account {item['to_bank_account_id'] or '-'}",
        f"Answers ({len(answers)}):",
        *_answer_lines(answers, zone),
        *_note_lines(_notes(conn, item_id, account), zone),
        *_case_lines(cases, actions, zone),
    ]


def _notes(conn: Connection, item_id: str, account: str) -> list[Any]:
    n = notifications.c
    return list(
        conn.execute(
            select(n.id, n.kind, n.received_at, n.state, n.amount, n.source)
            .where(
                n.provider_account == account,
                (n.transaction_id == item_id) | (n.original_transaction_id == item_id),
            )
            .order_by(n.id)
        ).all()
    )


def _answer_lines(answers: Sequence[Any], zone: ZoneInfo) -> list[str]:
    lines = []
    for a in answers:
        amount = f" {_amount_text(a.amount)} {a.currency}" if a.amount and a.currency else ""
        what = f"{state_name(a.state)}, a {type_name(a.type)}{amount}"
        if a.currency and (fee := _fee(a.fee_amount_minor, a.fee_id, a.currency)):
            what += f", fee {fee}"
        if a.status != "ok":
            what = f"{a.status}: {a.error_code or a.error or ''}".rstrip(": ")
        lines.append(f"  run {a.run_id} {_when(a.fetched_at, zone)} {what}")
    return lines


def _fee(minor: int | None, fee_id: str | None, currency: str) -> str:
    """A fee as finance reads it (``0.75 EUR (fee id F-1)``); "" for none."""
    if minor is None:
        return ""
    return money(minor, currency) + (f" (fee id {fee_id})" if fee_id else "")


def _note_lines(notes: Sequence[Any], zone: ZoneInfo) -> list[str]:
    return [f"Notifications ({len(notes)}):"] + [
        f"  #{x.id} {x.kind} {_when(x.received_at, zone)}"
        + (f" {state_name(x.state)}" if x.state is not None else "")
        + (f" amount {_amount_text(x.amount)}" if x.amount is not None else "")
        + f" ({x.source})"
        for x in notes
    ]


def _case_lines(cases: Sequence[Any], actions: dict[str, Any], zone: ZoneInfo) -> list[str]:
    lines = [f"Exceptions ({len(cases)}):"]
    for c in cases:
        lines.append(
            f"  {c.exception_id} {flag_words(c.flag)} on {c.item_kind} {c.item_id}: {c.state}"
            f" since {_when(c.opened_at, zone)}"
            + (
                f" · {words}"
                if (words := case_detail(c.flag, c.last_facts, c.detail, zone=str(zone)))
                else ""
            )
        )
        for done in actions.get(str(c.exception_id), []):
            note = f": {change_note(done.note)}" if done.note else ""
            lines.append(
                f"    {_when(done.at, zone)} {done.by}{_decided(done.decided_by)} {done.action}"
                f"{note}"
            )
    return lines


def _amount_text(sent: object) -> str:
    """An amount as the provider sent it, thousands separated (``2,114.77``); text that is not a
    number is shown as sent."""
    try:
        return f"{Decimal(str(sent)):,}"
    except InvalidOperation:
        return str(sent)
