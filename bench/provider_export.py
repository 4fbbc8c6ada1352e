"""The provider's export at volume: a night at 100,000 new payouts with the export stored.

Three measurements, all on SQLite, the provider answered by the fast stand-in
(:mod:`bench.standin`, which answers the generated ids ``tx<n><kind>`` by rule):

- *Components* (in a child process of their own, so its peak resident memory is theirs): the
  steady-state store (:mod:`bench.steady`) holding tonight's 100,000 new payouts and no history;
  a 100,000-row file in the sandbox's format (:func:`recon.sandbox.exports.render`), one payout
  row each, every one settled at its recorded amount; then, timed one after the other with
  ``time.perf_counter`` (wall) and ``time.process_time`` (CPU; SQLite's work included):
  ``read_export`` (parse through the default mapping), ``store_export`` (one file and its rows,
  with the provider's cap: a file of exactly 100,000 rows is recorded as capped, as a pull would
  keep it before splitting its window), ``select_polls`` (the night's selection) and the night's
  match (:func:`recon.night.export.export_match`: the stored rows and the record read back, then
  the pure match). Peak memory: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after each step
  and the child's whole-process peak from ``os.wait4``.
- *Night at 100,000*: the same store generated afresh, the provider's own file stored (what the
  stand-in says: settled rows for the settled kinds ``s`` and ``m``, ``m`` one cent above the
  record; pending, failed, aborted and unknown payouts have no settlement and no row), then one
  ``recon run`` measured as a process (wall, CPU, peak resident memory) with its stored polls.
- *Steady state*: polls per night with and without the export on the steady-state store at
  ``STEADY_PER_DAY`` payouts a day over ``STEADY_DAYS`` days of history (polls per new payout do
  not depend on the daily volume: the schedules are in days), night at 02:00 UTC. One copy gets
  what the nightly pulls would have left: one file per settlement day, stored at 02:00 the night
  after it (the lookback's re-pulls of the same bytes store nothing more), holding the payouts
  settled that day (settlement at creation plus one hour; ``m`` one cent above). Both copies are
  run by ``recon run`` against the stand-in; the polls are the runs' own counts.
"""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from bench import steady
from bench.support import PYTHON, ROOT, Measured, copy_sqlite, measure, standin_process
from recon.constants import DEFAULT_ACCOUNT
from recon.ingest.provider_export import read_export
from recon.night.export import export_match
from recon.night.lifecycle import Run, RunMode
from recon.sandbox.exports import PAYOUT, render
from recon.settings import Settings, load_settings
from recon.store.db import make_engine
from recon.store.export_rows import store_export
from recon.store.selection import select_polls
from recon.store.tables import payouts

PER_NIGHT = 100_000
STEADY_PER_DAY = 2_000
STEADY_DAYS = 91  # the watch window (90 days) and one more: every schedule at its steady state
# Every payout on the return watch (30 days) keeps its latest answer, as a store that never
# deletes answers does: the export stands in for a check by that answer.
ANSWERED_NIGHTS = 31
NIGHT_MEMORY_LIMIT_MB = 6_000.0
SETTLED = "6"


def _settings(url: str) -> Settings:
    return load_settings(database_url=url)


def _epoch(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _money(minor: int) -> str:
    return str(Decimal(minor) / 100)


def _export_rows(engine: Engine, *, truth: bool) -> list[tuple[datetime, list[str]]]:
    """(settled, row) for the store's payouts, by settlement time: every one settled at its
    recorded amount, or (``truth``) what the stand-in says: settled kinds only, ``m`` one cent
    above; settled at creation plus one hour."""
    p = payouts.c
    query = select(p.transaction_id, p.amount_minor, p.currency, p.merchant_reference, p.created)
    with engine.connect() as conn:
        found = conn.execute(query).all()
    out = []
    for tx, minor, currency, reference, created in found:
        kind = tx[-1]
        if truth and kind not in ("s", "m"):
            continue
        settled = created.replace(tzinfo=created.tzinfo or UTC) + timedelta(hours=1)
        amount = minor + (1 if truth and kind == "m" else 0)
        out.append(
            (
                settled,
                [tx, PAYOUT, SETTLED, _money(amount), currency.lower(), reference,
                 _epoch(created), _epoch(settled), "", "", ""],
            )
        )  # fmt: skip
    out.sort(key=lambda pair: pair[0])
    return out


def _store_file(
    settings: Settings,
    engine: Engine,
    data: bytes,
    start: datetime,
    end: datetime,
    stored_at: datetime | None = None,
) -> tuple[int, int, bool]:
    """Parse ``data`` and store it for ``[start, end)``: (rows, problems, capped)."""
    export = read_export(data, settings.export, source="bench")
    stored = store_export(
        engine, account=DEFAULT_ACCOUNT, settled_from=start, settled_to=end,
        data_sha256=hashlib.sha256(data).hexdigest(), headers=export.headers, rows=export.rows,
        source="file", name="bench.csv", row_cap=settings.export_row_cap, now=stored_at,
    )  # fmt: skip
    return len(export.rows), len(export.problems), stored.capped


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def components(url: str, as_of_text: str) -> dict[str, Any]:
    """The child's work: a 100,000-row file parsed, stored and matched; each step timed."""
    as_of = datetime.fromisoformat(as_of_text)
    settings = _settings(url)
    engine = make_engine(url)
    pairs = _export_rows(engine, truth=False)
    data = render([row for _, row in pairs])
    start = min(s for s, _ in pairs).replace(minute=0, second=0, microsecond=0)
    end = max(s for s, _ in pairs) + timedelta(hours=1)
    steps: dict[str, Any] = {"rows": len(pairs), "bytes": len(data), "before_mb": _peak_mb()}

    def timed(name: str, work: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        result = work()
        steps[name] = {
            "seconds": time.perf_counter() - wall,
            "cpu": time.process_time() - cpu,
            "peak_mb": _peak_mb(),
        }
        return result

    export = timed("read_export", lambda: read_export(data, settings.export, source="bench"))
    steps["problems"] = len(export.problems)
    stored = timed(
        "store_export",
        lambda: store_export(
            engine, account=DEFAULT_ACCOUNT, settled_from=start, settled_to=end,
            data_sha256=hashlib.sha256(data).hexdigest(), headers=export.headers,
            rows=export.rows, source="file", name="bench.csv", row_cap=settings.export_row_cap,
        ),
    )  # fmt: skip
    steps["capped"] = stored.capped

    def polls() -> Any:
        with engine.connect() as conn:
            return select_polls(conn, as_of=as_of, account=DEFAULT_ACCOUNT)

    chosen = timed("select_polls", polls)
    run = Run(RunMode.NIGHTLY, as_of, as_of, id=None)
    matched = timed("match", lambda: export_match(settings, engine, run, chosen))
    steps["polls_without"] = sum(len(ids) for ids in chosen.values())
    steps["decided"] = matched.saved
    steps["ask"] = len(matched.ask)
    engine.dispose()
    return steps


@dataclass(frozen=True)
class Components:
    """The child's figures and its whole-process measurement."""

    steps: dict[str, Any]
    process: Measured


@dataclass(frozen=True)
class Night:
    """One measured ``recon run``: its polls per reason, polls saved, the process."""

    label: str
    new: int
    night: steady.Night

    @property
    def polls(self) -> dict[str, int]:
        return {str(k): int(v) for k, v in dict(self.night.counts.get("polls", {})).items()}

    @property
    def saved(self) -> int:
        return int(self.night.counts.get("polls_saved", 0))


@dataclass(frozen=True)
class Results:
    components: Components
    night: Night
    without: Night
    with_export: Night
    steady_files: int
    steady_rows: int


def _generate(
    db: Path, *, days: int, per_day: int, as_of: datetime, observation_nights: int = 2
) -> steady.Generated:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return steady.generate(
        f"sqlite:///{db}",
        days=days,
        per_day=per_day,
        as_of=as_of,
        observation_nights=observation_nights,
    )


def _night(label: str, new: int, store: steady.Generated, provider: str, work: Path) -> Night:
    night = steady.run_night(store, provider, work, memory_limit_mb=NIGHT_MEMORY_LIMIT_MB)
    if night.process.returncode != 0:
        last = (night.process.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"{label}: recon run exited {night.process.returncode}: {last}")
    return Night(label, new, night)


def _steady_files(store: steady.Generated) -> tuple[int, int]:
    """One file per settlement day before tonight, stored the night after it: (files, rows)."""
    settings = _settings(store.url)
    engine = make_engine(store.url)
    files = rows = 0
    by_day: dict[datetime, list[tuple[datetime, list[str]]]] = {}
    for pair in _export_rows(engine, truth=True):
        by_day.setdefault(pair[0].replace(hour=0, minute=0, second=0, microsecond=0), []).append(
            pair
        )
    tonight = store.as_of.replace(hour=0, minute=0, second=0, microsecond=0)
    for day, pairs in sorted(by_day.items()):
        end = day + timedelta(days=1)
        if end <= tonight:
            data = render([row for _, row in pairs])
            n, _problems, _capped = _store_file(
                settings, engine, data, day, end, stored_at=end + timedelta(hours=2)
            )
            files, rows = files + 1, rows + n
    engine.dispose()
    return files, rows


def bench_provider_export(
    work: Path, say: Callable[[str], None], *, quick: bool = False
) -> Results:
    """The three measurements (``quick``: a tenth of the sizes)."""
    per_night = PER_NIGHT // 10 if quick else PER_NIGHT
    per_day = STEADY_PER_DAY // 10 if quick else STEADY_PER_DAY
    as_of = steady.tonight()
    say(f"provider export: components, {per_night:,} new payouts and a {per_night:,}-row file")
    db = work / "export-components.db"
    _generate(db, days=0, per_day=per_night, as_of=as_of)
    process = measure(
        [PYTHON, "-m", "bench.provider_export", "components", f"sqlite:///{db}",
         as_of.isoformat()],
        timeout=3600, memory_limit_mb=NIGHT_MEMORY_LIMIT_MB,
    )  # fmt: skip
    parts = Components(process.json(), process)
    say(f"provider export: components {json.dumps(parts.steps)}")
    with standin_process(fast=True) as provider:
        say(f"provider export: a night at {per_night:,} new payouts with their file stored")
        store = _generate(db, days=0, per_day=per_night, as_of=as_of)
        settings = _settings(store.url)
        engine = make_engine(store.url)
        pairs = _export_rows(engine, truth=True)
        start = min(s for s, _ in pairs).replace(minute=0, second=0, microsecond=0)
        _store_file(settings, engine, render([r for _, r in pairs]), start,
                    max(s for s, _ in pairs) + timedelta(hours=1))  # fmt: skip
        engine.dispose()
        night = _night("night", per_night, store, provider.url, work)
        say(f"provider export: night {night.polls} saved {night.saved}")
        at_two = as_of.replace(hour=2)
        say(f"provider export: steady state, {STEADY_DAYS} days of {per_day:,} a day")
        plain = work / "export-steady.db"
        base = _generate(
            plain,
            days=STEADY_DAYS,
            per_day=per_day,
            as_of=at_two,
            observation_nights=ANSWERED_NIGHTS,
        )
        exported = work / "export-steady-with.db"
        copy_sqlite(plain, exported)
        with_store = steady.Generated(f"sqlite:///{exported}", at_two, STEADY_DAYS, base.rows)
        files, rows = _steady_files(with_store)
        without = _night("without", per_day, base, provider.url, work)
        with_export = _night("with", per_day, with_store, provider.url, work)
        say(f"provider export: steady without {without.polls}, with {with_export.polls}")
    for path in (db, plain, exported):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return Results(parts, night, without, with_export, files, rows)


def _total(night: Night) -> int:
    return sum(night.polls.values())


def markdown(r: Results) -> list[str]:
    """BENCHMARKS.md's section."""
    s = r.components.steps
    match_s = s["read_export"]["seconds"] + s["store_export"]["seconds"] + s["match"]["seconds"]
    match_cpu = s["read_export"]["cpu"] + s["store_export"]["cpu"] + s["match"]["cpu"]
    rows = [
        f"| {name} | {s[key]['seconds']:.2f} | {s[key]['cpu']:.2f} | {s[key]['peak_mb']:,.0f} |"
        for name, key in (
            ("`read_export` (parse, default mapping)", "read_export"),
            ("`store_export` (the file and its rows)", "store_export"),
            ("`select_polls` (the night's selection)", "select_polls"),
            ("the night's match (`recon.night.export.export_match`: read, match)", "match"),
        )
    ]
    n = r.night
    night_polls = _total(n)
    w, wo = r.with_export, r.without
    reasons = [k for k in {**wo.polls, **w.polls} if wo.polls.get(k) or w.polls.get(k)]
    peak = max(r.components.process.peak_mb, n.night.process.peak_mb)
    ratio_with = _total(w) / w.new
    return [
        "## The provider's export at 100,000 payouts",
        "",
        "`bench/provider_export.py` (SQLite; the provider is the fast stand-in, "
        "`bench/standin.py --fast`). Components in a child process of their own: "
        f"{s['rows']:,} new payouts and a {s['rows']:,}-row file in the sandbox's format "
        f"({s['bytes'] / 1e6:.1f} MB, every row a settled payout at its recorded amount, "
        f"{s['problems']} unreadable; stored with the provider's cap, so "
        f"{'recorded as capped, as a pull keeps a file at the cap before splitting its window' if s['capped'] else 'not capped'}"  # noqa: E501
        "). Seconds are wall time, CPU s `time.process_time` (SQLite's work included), peak MB "
        "`resource.getrusage(RUSAGE_SELF).ru_maxrss` after the step (the process's peak so far).",
        "",
        "| step | s | CPU s | peak MB so far |",
        "| --- | ---: | ---: | ---: |",
        *rows,
        "",
        f"- The match found {s['decided']:,} of {s['polls_without']:,} payouts to poll decided by "
        f"the file and {s['ask']:,} to ask about.",
        f"- Goal, parse and match of a 100,000-row file under 10 s: read + store + match "
        f"**{match_s:.1f} s** wall ({match_cpu:.1f} CPU s) "
        f"(**{'met' if match_s < 10 else 'not met'}**); parse and match without the store: "
        f"{s['read_export']['seconds'] + s['match']['seconds']:.1f} s.",
        f"- A night at {n.new:,} new payouts with the provider's own file stored "
        f"({n.new * 932 // 1000:,} settled rows: pending, failed, aborted and unknown payouts "
        f"have none): `recon run` **{night_polls:,} polls** ({night_polls / n.new:.2f}x the new "
        f"payouts; {n.saved:,} decided from the export), {n.night.process.seconds:.1f} s, "
        f"{n.night.process.cpu_seconds:.1f} CPU s, peak **{n.night.process.peak_mb:,.0f} MB** "
        "(`os.wait4`'s ru_maxrss of the process).",
        f"- Goal, peak memory under 1 GB: components {r.components.process.peak_mb:,.0f} MB, "
        f"the night {n.night.process.peak_mb:,.0f} MB (**{'met' if peak < 1024 else 'not met'}**"
        ").",
        "",
        f"Polls per night at the steady state ({STEADY_DAYS} days of history at "
        f"{w.new:,} new payouts a day, night at 02:00 UTC; the export as the nightly pulls "
        f"leave it: {r.steady_files} files, one per settlement day, {r.steady_rows:,} rows; "
        "the latest answer of every payout on the return watch stored), "
        "each night a `recon run` against the stand-in:",
        "",
        "| night | " + " | ".join(reasons) + " | total | x new | decided from the export |",
        "| --- | " + " | ".join("---:" for _ in reasons) + " | ---: | ---: | ---: |",
        *(
            f"| {x.label} the export | "
            + " | ".join(f"{x.polls.get(k, 0):,}" for k in reasons)
            + f" | {_total(x):,} | {_total(x) / x.new:.2f} | {x.saved:,} |"
            for x in (wo, w)
        ),
        "",
        f"- Goal, polls per night at most 1.5x the new payouts: **{ratio_with:.2f}x** with the "
        f"export ({_total(wo) / wo.new:.2f}x without) "
        f"(**{'met' if ratio_with <= 1.5 else 'not met'}**).",
        "- Why: the export decides two kinds of payouts the night would ask about. A new payout "
        "whose row was stored after its last answer (`export_match`'s *fresh*): tonight's new "
        "payouts settled yesterday are (the night's pull covers yesterday), so the *open* polls "
        f"drop by {wo.polls.get('open', 0) - w.polls.get('open', 0):,}. And a settled payout due "
        "for its return-watch check whose settlement days since its last answer, through "
        "yesterday, are all covered by complete files, with no returned-funds row naming it and "
        "no row disagreeing with its latest answer (`watch_from_export`: that answer stands "
        "again, and the watch moves on as if it had been asked): *return watch* polls "
        f"{wo.polls.get('return watch', 0):,} without the export, "
        f"{w.polls.get('return watch', 0):,} with it. Failed, aborted and unknown payouts have "
        f"no settlement row: *watch* ({w.polls.get('watch', 0):,}) is polled as before.",
    ]


def main() -> None:  # pragma: no cover - `python -m bench.provider_export ...`
    if len(sys.argv) == 4 and sys.argv[1] == "components":
        print(json.dumps(components(sys.argv[2], sys.argv[3])))
        return
    import tempfile

    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = bench_provider_export(
            Path(tmp), lambda t: print(f"[{datetime.now(UTC):%H:%M:%S}] {t}", flush=True),
            quick=quick,
        )  # fmt: skip
    print("\n".join(markdown(results)))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
