"""A finding's life: one case per (item, exception name), the only record of its state. Pure.

The run computes each case's next state; the store only writes it (:mod:`recon.store.cases`).

    found, no case            -> open (new)             E<run id>-<n>; a dry run leaves the id empty
    open, found or not judged -> open (persisting)      in Needs action every night
    found, facts changed      -> open (new)             a person's case reopens
    snoozed, its date came    -> open (persisting)      back in Needs action
    judged and not found      -> cleared (listed once)  the facts went away: the case ends
    resolved, not found       -> ends (listed once)     a repeat of the finding opens a new case
    a person (:func:`check_action`): open -> acknowledged | snoozed | resolved; closed -> open

A finding is *judged* when the run decided its item (the payout, the return) and, for
``fetch_failed`` and ``wrong_transaction``, got an answer: a case leaves Needs action only by a
person or by the facts, never because a run did not look (an unreadable notification, a claim
recon no longer asks about, a payout whose fetch failed again all stay open until closed). A
resolution is listed once ("Resolved since the previous run"), then hidden while its finding
stands unchanged. A finding's facts are values (:mod:`recon.reconcile.finding`); its kind says which
of them make it another finding (``same_when``, ``grows``): another amount, state or return
reopens a person's case; a group of payouts reopens only when a member joins. A case keeps the
facts it is compared by (``facts``) and those it was last shown with (``last_facts``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from recon import frames as fr
from recon.constants import LIVE_CASE_STATES, CaseAction, CaseState, FlagStatus
from recon.decision import (
    ActionRequest,
    CaseDecision,
    CaseStanding,
    PersonChange,
)
from recon.frames import Compared, Finding, Findings
from recon.reconcile.finding import (
    KEPT,
    Ends,
    Facts,
    Kind,
    facts_differ,
    facts_text,
    read_facts,
)
from recon.reconcile.kinds import kind_of
from recon.reconcile.problems import Merge, carry_over
from recon.run_frames import CaseReport

RECON = "recon"  # the ``by`` of what a run does by itself
Row = dict[Any, Any]  # a record of a frame, or a write
_KEY = [Finding.ITEM_KIND, Finding.ITEM_ID, Finding.FLAG]


def basis(kind: Kind | None, facts: Facts | None) -> Facts | None:
    """The facts a case is compared by: those its kind names (``same_when``, ``grows``)."""
    if facts is None or kind is None:
        return facts
    wanted = {*kind.same_when, *kind.grows}
    return {k: v for k, v in facts.items() if k in wanted}


def describe_resolution(
    state: object, owner: object, at: object, note: object, until: object = None
) -> str:
    """ "acknowledged by anna on 2026-11-20: note" — how an earlier resolution reads."""
    text = f"{state} by {_text(owner) or 'someone'}"
    if isinstance(at, datetime | pd.Timestamp) and not pd.isna(at):
        text += f" on {at:%Y-%m-%d}"
    if isinstance(until, datetime | pd.Timestamp) and not pd.isna(until):
        text += f" until {until:%Y-%m-%d}"
    note_text = _text(note)
    return f"{text}: {note_text}" if note_text else text


def facts_gone(
    kind: str,
    item_id: str,
    flag: str,
    *,
    judged: frozenset[tuple[str, str]],
    answered: frozenset[str],
    unanswered: frozenset[str] = frozenset(),
    exported: frozenset[str] = frozenset(),
    facts: Mapping[str, Any] | None = None,
) -> bool:
    """Whether a finding this run did not find is gone by the facts, not by not being looked at.

    The run judged the item (decided the payout, linked the return) and did not ask about it in
    vain (``unanswered``: asked tonight, no answer: nothing about it was learnt, so a claim whose
    fetch failed stays unverified rather than turning into a fetch failure alone); for
    ``fetch_failed`` and ``wrong_transaction`` it got an answer about it: they are cleared by an
    answer, never by not being asked (or by a fetch that failed the next night); for a finding
    of the provider's export, the night's match read the export about it (``exported``): a
    payout beyond the rows the night reads keeps its finding; so does one whose last ``facts``
    say the export found it (one of its kind's ``from_export`` facts is set).
    """
    if (kind, item_id) not in judged or item_id in unanswered:
        return False
    declared = kind_of(flag)
    if declared is None:
        return True
    ends = declared.ends
    if any((facts or {}).get(name) is not None for name in declared.from_export):
        ends = Ends.EXPORT
    if ends is Ends.FACTS:
        return True
    return item_id in (answered if ends is Ends.ANSWER else exported)


def _export_as_last_read(kind: Kind, facts: Any, last: object) -> Any:
    """A finding seen on a night that did not read the export about its item: the export's side
    of it (its kind's ``from_export`` facts) as the case last had it, not as absent."""
    kept = read_facts(last)
    if not isinstance(facts, dict) or not kept:
        return facts
    return {**facts, **{name: kept.get(name) for name in kind.from_export}}


def follow_cases(
    found: pd.DataFrame,
    cases: pd.DataFrame,
    *,
    judged: frozenset[tuple[str, str]],
    answered: frozenset[str],
    run_id: int | None,
    as_of: datetime,
    unanswered: frozenset[str] = frozenset(),
    exported: frozenset[str] = frozenset(),
) -> CaseDecision:
    """Give each of this run's findings its case, and each live case its status; see the module
    docstring.

    ``found``: this run's findings (:class:`recon.frames.Findings`). ``judged``:
    the items (kind, id) the run decided; ``answered``: the ids it has an answer about;
    ``unanswered``: the ids it asked about and got none; ``exported``: the payouts the night's
    match read the export about (:func:`facts_gone`).
    """
    now = pd.Timestamp(as_of)
    found, merges = carry_over(found, cases)
    merged = {str(m.case["exception_id"]) for m in merges}
    live = {
        (str(c["item_kind"]), str(c["item_id"]), str(c["flag"])): c
        for c in cases.to_dict("records")
        if str(c["exception_id"]) not in merged
    }
    rows: list[Row] = []
    opened: list[Row] = []
    changed: list[Row] = []
    actions: list[Row] = []
    ordered = found.drop_duplicates(_KEY).sort_values(_KEY, kind="stable")
    found_rows = {
        (str(r[Finding.ITEM_KIND]), str(r[Finding.ITEM_ID]), str(r[Finding.FLAG])): r
        for r in ordered.to_dict("records")
    }
    for key in sorted(found_rows.keys() | live.keys()):
        row, case = found_rows.get(key), live.get(key)
        if row is None:
            assert case is not None
            row = {
                **dict(zip(_KEY, key, strict=True)),
                Finding.FACTS: read_facts(case["last_facts"]),
                Compared.DETAIL: case["detail"],
            }
            gone = facts_gone(
                *key,
                judged=judged,
                answered=answered,
                unanswered=unanswered,
                exported=exported,
                facts=row[Finding.FACTS],
            )
            if gone or (case["state"] == CaseState.RESOLVED):
                # Gone by the facts: cleared (listed once), or a person's resolution ends (listed
                # once if not yet); a resolved claim recon no longer asks about ends too, so a
                # repeat of it opens a new case.
                shown = _ending(case, run_id, changed)
                if shown is not None:
                    rows.append({**row, **_report(case), Compared.STATUS: shown})
                continue
            facts = None  # not looked at tonight: the case stands as it is
        else:
            shown_facts = row[Finding.FACTS]
            kind = kind_of(key[2])
            if (
                kind is not None
                and kind.from_export
                and case is not None
                and key[1] not in exported
            ):
                shown_facts = _export_as_last_read(kind, shown_facts, case["last_facts"])
            facts = basis(kind, shown_facts) if row[Findings.KNOWN] else None
            if shown_facts is None and case is not None:  # carried without an answer
                last = read_facts(case["last_facts"])
                shown_facts = None if last is None else {**last, KEPT: True}
            row = {
                **dict(zip(_KEY, key, strict=True)),
                Finding.FACTS: shown_facts,
                Compared.DETAIL: None,
            }
        if case is None:
            exception_id = "" if run_id is None else f"E{run_id}-{len(opened) + 1}"
            opened.append(
                {
                    "exception_id": exception_id,
                    **dict(zip(_KEY, key, strict=True)),
                    "state": CaseState.OPEN.value,
                    "facts": facts_text(facts),
                    "last_facts": facts_text(row[Finding.FACTS]),
                    "detail": None,
                    "opened_run_id": run_id,
                    "opened_at": as_of,
                    "last_seen_run_id": run_id,
                    "version": 1,
                }
            )
            rows.append(
                {
                    **row,
                    Compared.STATUS: FlagStatus.NEW.value,
                    "exception_id": exception_id,
                    "owner": None,
                    "note": None,
                    "until": pd.NaT,
                    "opened_at": now,
                    "previous_resolution": None,
                }
            )
            continue
        status, update, action = _follow(case, facts, now)
        if status == FlagStatus.RESOLVED and not pd.isna(case["reported_run_id"]):
            status = ""  # listed once already: hidden while the finding stands unchanged
        elif status == FlagStatus.RESOLVED:
            update["reported_run_id"] = run_id
        if any(_differs(case.get(c), v) for c, v in update.items()):
            # Only real changes are written (most open cases stay as they are night after night)
            # A finding not fetched tonight ("kept from the previous run") keeps its last facts.
            if facts is not None:
                update.update(last_facts=facts_text(row[Finding.FACTS]), detail=None)
            if key in found_rows:
                update["last_seen_run_id"] = run_id
            changed.append(_versioned(case, update))
        if action is not None:
            actions.append(
                {**action, "exception_id": case["exception_id"], "source": _source(run_id)}
            )
        if status:
            rows.append({**row, **_report({**case, **update}), Compared.STATUS: status})
    _merge(merges, live, opened, changed, actions, rows, run_id=run_id, now=now)
    return CaseDecision(exceptions=_frame(rows), opened=opened, changed=changed, actions=actions)


def _merge(
    merges: list[Merge],
    live: dict[Any, Row],
    opened: list[Row],
    changed: list[Row],
    actions: list[Row],
    rows: list[Row],
    *,
    run_id: int | None,
    now: pd.Timestamp,
) -> None:
    """End each case carried into another (a live one cleared, a resolution ended), and write the
    merge in both histories; a case that takes one in and has no owner yet takes its owner and
    note."""
    into_case = dict(live) | {tuple(str(o[c]) for c in _KEY): o for o in opened}
    updates = {str(c["exception_id"]): c for c in changed}
    for merge in merges:
        case, target = merge.case, into_case[merge.into]
        into_id = str(target["exception_id"])
        state = str(case["state"])
        ending: Row = {"ended_run_id": run_id}
        if state != CaseState.RESOLVED:
            ending["state"] = CaseState.CLEARED.value
        changed.append(_versioned(case, ending))
        after = str(ending.get("state", state))
        took = f"took in {case['exception_id']} ({case['flag']} on {case['item_id']}, {state})"
        person = state != CaseState.OPEN and not _missing(case["owner"])
        if person:
            took = f"took in {case['exception_id']} ({case['flag']} on {case['item_id']}): " + (
                describe_resolution(state, case["owner"], case["state_at"], case["note"])
            )
        for eid, before, now_state, note in (
            (str(case["exception_id"]), state, after, f"merged into {into_id}"),
            (into_id, str(target["state"]), str(target["state"]), took),
        ):
            actions.append(
                {
                    **_action(CaseAction.MERGED, before, note, now),
                    "state": now_state,
                    "exception_id": eid,
                    "source": _source(run_id),
                }
            )
        if not person or not _missing(target.get("owner")):
            continue
        carried = {"owner": case["owner"], "note": case["note"]}
        if target in opened:
            target.update(carried)
        else:
            change = updates.get(into_id)
            if change is None:
                change = _versioned(target, {})
                changed.append(change)
                updates[into_id] = change
            change.update(carried)
        target.update(carried)
        for row in rows:
            if row.get("exception_id") == into_id:
                row.update(carried)


def _follow(case: Row, facts: Facts | None, now: pd.Timestamp) -> tuple[str, Row, Row | None]:
    """A found finding's live case: its status now, the update, and recon's own action if any."""
    state = str(case["state"])
    stored = None if _missing(case["facts"]) else str(case["facts"])
    before = read_facts(stored)
    kind = kind_of(case["flag"])
    differs = (
        facts is not None
        and before is not None
        and kind is not None
        and facts_differ(kind, before, facts)
    )
    update: Row = {"facts": facts_text(facts) if facts is not None else stored}
    if state == CaseState.OPEN:
        return FlagStatus.PERSISTING.value, update, None
    earlier = describe_resolution(
        state,
        case["owner"],
        case["state_at"],
        case["note"],
        case["until"] if state == CaseState.SNOOZED else None,
    )
    reopen = {
        "state": CaseState.OPEN.value,
        "owner": None,
        "note": None,
        "until": None,
        "previous_resolution": earlier,
    }
    if differs:
        update.update(reopen)
        changed = facts_text({"was": before, "now": facts})
        action = _action(CaseAction.FACTS_CHANGED, state, changed, now)
        return FlagStatus.NEW.value, update, action
    if state == CaseState.SNOOZED and not pd.isna(case["until"]) and case["until"] <= now:
        update.update(reopen)
        return (
            FlagStatus.PERSISTING.value,
            update,
            _action(CaseAction.SNOOZE_ENDED, state, None, now),
        )
    return state, update, None


def _ending(case: Row, run_id: int | None, changed: list[Row]) -> str | None:
    """A case whose condition went away: cleared (listed once) unless a person closed it first."""
    update: Row = {"ended_run_id": run_id}
    shown: str | None = None
    if case["state"] == CaseState.RESOLVED:
        if pd.isna(case["reported_run_id"]):
            update["reported_run_id"] = run_id
            shown = FlagStatus.RESOLVED.value
    else:
        update["state"] = CaseState.CLEARED.value
        shown = FlagStatus.CLEARED.value
    changed.append(_versioned(case, update))
    return shown


def _differs(before: Any, after: Any) -> bool:
    if after is None:
        return not _missing(before)
    return _missing(before) or bool(before != after)


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def _versioned(case: Row, update: Row) -> Row:
    return {**update, "exception_id": case["exception_id"], "version": int(case["version"])}


def _action(action: CaseAction, previous: str, note: str | None, now: pd.Timestamp) -> Row:
    return {
        "at": now.to_pydatetime(),
        "by": RECON,
        "action": action.value,
        "previous_state": previous,
        "state": CaseState.OPEN.value,
        "note": note,
        "until": None,
    }


def _source(run_id: int | None) -> str:
    return f"run {run_id}" if run_id is not None else "dry run"


def _report(case: Row) -> Row:
    return {c: case.get(c) for c in CaseReport}


def _text(value: Any) -> str:
    return "" if _missing(value) else str(value)


def _frame(rows: list[Row]) -> pd.DataFrame:
    columns = [*fr.Compared.names(), *CaseReport.names()]
    frame = pd.DataFrame(rows, columns=columns)
    text = {c: dtype for c, dtype in CaseReport.dtypes().items() if dtype != fr.TIME}
    out = frame.astype({**fr.Compared.dtypes(), **text})
    for c in CaseReport.dtypes().keys() - text.keys():
        out[c] = pd.to_datetime(frame[c], utc=True)
    return out.sort_values(_KEY).reset_index(drop=True)


# -- a run's findings as they stand now -------------------------------------------------------

# Where a status a run reported leaves a case, and how a case's state now is shown.
_STATE_OF = {
    FlagStatus.NEW: CaseState.OPEN,
    FlagStatus.PERSISTING: CaseState.OPEN,
    FlagStatus.ACKNOWLEDGED: CaseState.ACKNOWLEDGED,
    FlagStatus.SNOOZED: CaseState.SNOOZED,
    FlagStatus.RESOLVED: CaseState.RESOLVED,
    FlagStatus.CLEARED: CaseState.CLEARED,
}
_SHOWN_AS = {
    CaseState.OPEN: FlagStatus.PERSISTING,
    CaseState.ACKNOWLEDGED: FlagStatus.ACKNOWLEDGED,
    CaseState.SNOOZED: FlagStatus.SNOOZED,
    CaseState.RESOLVED: FlagStatus.RESOLVED,
    CaseState.CLEARED: FlagStatus.CLEARED,
}


def as_they_stand(reported: pd.DataFrame, cases: pd.DataFrame) -> pd.DataFrame:
    """A run's findings (:class:`recon.frames.Compared` with :class:`~recon.run_frames.CaseReport`)
    with what people did since: each row whose case (``cases``: exception_id, state, owner, note,
    until) is in another state now shows that state (a case reopened: persisting, back in Needs
    action), and every row its case's owner, note and until as they are now."""
    if reported.empty or cases.empty:
        return reported
    now = cases.drop_duplicates("exception_id").set_index("exception_id")
    ids = reported["exception_id"].astype("string")
    known = ids.isin(now.index).fillna(False).to_numpy(dtype=bool)
    if not known.any():
        return reported
    out = reported.copy()
    rows = out.index[known]
    state = ids[known].map(now["state"].astype(str))
    shown = {status.value: state.value for status, state in _STATE_OF.items()}
    was = out.loc[rows, Compared.STATUS].astype(str).map(shown)
    moved = (was.notna() & (state != was)).to_numpy(dtype=bool)
    out.loc[rows[moved], Compared.STATUS] = [_SHOWN_AS[CaseState(s)].value for s in state[moved]]
    for column in ("owner", "note", "until"):
        out.loc[rows, column] = ids[known].map(now[column]).to_numpy()
    return out


# -- what people do ------------------------------------------------------------------------------

_TARGET = {
    CaseAction.ACKNOWLEDGE: CaseState.ACKNOWLEDGED,
    CaseAction.SNOOZE: CaseState.SNOOZED,
    CaseAction.RESOLVE: CaseState.RESOLVED,
    CaseAction.REOPEN: CaseState.OPEN,
}


def plan_actions(
    requests: Sequence[ActionRequest], cases: Mapping[str, CaseStanding], *, now: datetime
) -> tuple[list[PersonChange], list[tuple[str, str]]]:
    """People's requests against the cases they name: the changes, or the problems (where, what).

    All or nothing: when there is any problem, no change is planned. A person may acknowledge,
    snooze (to a future date) or resolve a live case, and reopen a closed one.
    """
    problems: list[tuple[str, str]] = []
    seen: dict[str, ActionRequest] = {}
    for request in requests:
        problems += [(request.where, p) for p in check_action(request, cases, now, seen)]
    if problems:
        return [], problems
    changes = []
    for request in requests:
        target = _TARGET[request.action]
        person = target is not CaseState.OPEN
        changes.append(
            PersonChange(
                request=request,
                previous_state=cases[request.exception_id].state,
                state=target.value,
                owner=(request.decided_by or request.by) if person else None,
                note=request.note if person else None,
                until=request.until if target is CaseState.SNOOZED else None,
                at=now,
            )
        )
    return changes, []


def check_action(
    request: ActionRequest,
    cases: Mapping[str, CaseStanding],
    now: datetime,
    seen: dict[str, ActionRequest],
) -> list[str]:
    """What is wrong with one request (empty: nothing)."""
    eid = request.exception_id
    earlier = seen.get(eid)
    if earlier is not None and (
        earlier.action is not request.action or earlier.note != request.note
    ):
        return [f"{eid} is also given {earlier.action.value} at {earlier.where}: say one"]
    seen.setdefault(eid, request)
    case = cases.get(eid)
    if case is None:
        return [f"no exception {eid!r} (ids look like E12-3; `recon exceptions list` shows them)"]
    if request.action is CaseAction.SNOOZE:
        if request.until is None:
            return [f"{eid}: snooze needs a date (--until YYYY-MM-DD)"]
        if request.until <= now:
            return [f"{eid}: snooze until {request.until:%Y-%m-%d} is not in the future"]
    elif request.until is not None and request.until != case.until:
        # The case's own snooze end, as the mailed files show it, may come back on any row.
        return [f"{eid}: a date (until) only goes with snooze, not {request.action.value}"]
    if case.ended_run_id is not None:
        return [f"{eid} is closed ({case.state} in run {case.ended_run_id}): nothing to change"]
    state = CaseState(case.state)
    if request.action is CaseAction.REOPEN and state is CaseState.OPEN:
        return [f"{eid} is already open"]
    if request.action is not CaseAction.REOPEN and state not in LIVE_CASE_STATES:
        return [f"{eid} is closed ({state.value}); reopen it first"]
    return []
