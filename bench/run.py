"""recon's benchmark suite (``make bench``): polling, scale and rate limits; writes BENCHMARKS.md.

The scale steps run on SQLite, and also on PostgreSQL when ``$RECON_BENCH_POSTGRES_URL`` (else
``$RECON_TEST_POSTGRES_URL``) names a server that answers, in a database created for the run and
dropped after it (``bench/support.py``); otherwise the table says why PostgreSQL is missing.

Not a test: nothing here asserts. Every figure is the median of several rounds, each round
measuring the things it compares back to back against the same sandbox, so ratios come from the
same conditions. ``--quick`` uses small sizes and one round, to smoke-test the script in seconds.

The sandbox runs in its own process (``recon sandbox serve``); every measured client (``recon
run``, ``recon import``, ``recon report``, the reference loops) is its own process too, measured
with ``os.wait4`` (CPU seconds, peak resident memory). The hand-written analysis in
The hand-written findings (from ``## Findings`` on) are kept below the generated tables.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/run.py`

from bench import journal, nights, polling, provider_export, rollforward, scale, trees
from bench.profiling import profile_command
from bench.seed import Seeded
from bench.standin import capture
from bench.support import (
    ROOT,
    Measured,
    PostgresServer,
    compile_tree,
    machine,
    median,
    postgres_server,
    sandbox_process,
    set_faults,
    standin_process,
    throwaway_database,
)


@dataclass(frozen=True)
class Sizes:
    """How big each benchmark is."""

    payouts: int
    sequential_sample: int
    rate_limit: float
    rate_payouts: int
    scale: tuple[int, ...]
    rounds: int
    scale_rounds: int


FULL = Sizes(20_000, 200, 200.0, 2_000, (100_000, 1_000_000), 3, 3)
QUICK = Sizes(1_000, 30, 200.0, 300, (10_000, 20_000), 1, 1)


def _say(text: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


def bench_polling(url: str, sizes: Sizes, work: Path) -> tuple[list[list[str]], dict[str, float]]:
    """Floor, recon run and sequential loop, ``rounds`` times each, interleaved."""
    _say(f"seeding {sizes.payouts} payouts through the sandbox API")
    seeded = polling.seed(url, sizes.payouts, work)
    store = polling.make_store(seeded, work, "poll")
    answers = work / "answers.jsonl"
    capture(url, store.ids_file, answers)  # the stand-in serves the sandbox's own answers
    old_tree = _issue_12_tree(seeded, work)
    set_faults(url, latency_ms=20)
    floor_rate, floor_proc_rate, run_rate, poll_rate, seq_rate = [], [], [], [], []
    run_cpu, run_mem, floor_cpu, floor_mem, startup = [], [], [], [], []
    lean_rate, lean_cpu, lean_mem = [], [], []  # RECON_REPORT_WORKBOOK=off
    old_rate, old_cpu, old_mem = [], [], []  # the tree before the refactor (ISSUE_12_TREE)
    hungry: dict[str, list[float]] = {k: [] for k in ("floor", "run", "floor_cpu", "run_cpu")}
    with standin_process(answers, latency_ms=20) as standin:
        for round_ in range(sizes.rounds):
            _say(f"polling round {round_ + 1}/{sizes.rounds}")
            floor = polling.floor_run(url, store)
            floor_rate.append(store.count / floor.json()["seconds"])
            floor_proc_rate.append(store.count / floor.seconds)
            floor_cpu.append(floor.cpu_seconds)
            floor_mem.append(floor.peak_mb)
            run = polling.recon_run(url, store, work)
            run_rate.append(store.count / run.process.seconds)
            poll_rate.append(run.poll_rate)
            run_cpu.append(run.process.cpu_seconds)
            run_mem.append(run.process.peak_mb)
            startup.append(run.process.seconds - float(run.counts.get("seconds", 0)))
            lean = polling.recon_run(url, store, work, RECON_REPORT_WORKBOOK="off")
            lean_rate.append(store.count / lean.process.seconds)
            lean_cpu.append(lean.process.cpu_seconds)
            lean_mem.append(lean.process.peak_mb)
            if isinstance(old_tree, tuple):
                old, _counts = trees.run_tree(*old_tree, url, work, as_of=None)
                old_rate.append(store.count / old.seconds)
                old_cpu.append(old.cpu_seconds)
                old_mem.append(old.peak_mb)
            seq = polling.sequential_run(url, store, sizes.sequential_sample)
            seq_rate.append(sizes.sequential_sample / seq.json()["seconds"])
            _say(f"polling round {round_ + 1}/{sizes.rounds}: the http.server stand-in")
            floor = polling.floor_run(standin.url, store)
            hungry["floor"].append(store.count / floor.seconds)
            hungry["floor_cpu"].append(floor.cpu_seconds)
            run = polling.recon_run(standin.url, store, work)
            hungry["run"].append(store.count / run.process.seconds)
            hungry["run_cpu"].append(run.process.cpu_seconds)
    n = store.count
    figures = {
        "floor_rate": median(floor_rate),
        "floor_proc_rate": median(floor_proc_rate),
        "run_rate": median(run_rate),
        "poll_rate": median(poll_rate),
        "seq_rate": median(seq_rate),
    }
    per_k = 1000 / n
    rows = [
        ["bare aiohttp loop (a), fetching", f"{n:,}", f"{median(floor_rate):,.0f}/s", "1.00",
         "", ""],
        ["bare aiohttp loop (a), whole process", f"{n:,}", f"{median(floor_proc_rate):,.0f}/s",
         f"{median(floor_proc_rate) / median(floor_rate):.2f}",
         f"{median(floor_cpu) * per_k:.2f}", f"{median(floor_mem):,.0f}"],
        ["recon run, whole process", f"{n:,}", f"{median(run_rate):,.0f}/s",
         f"{median(run_rate) / median(floor_rate):.2f}", f"{median(run_cpu) * per_k:.2f}",
         f"{median(run_mem):,.0f}"],
        ["recon run without report.xlsx, whole process", f"{n:,}", f"{median(lean_rate):,.0f}/s",
         f"{median(lean_rate) / median(floor_rate):.2f}", f"{median(lean_cpu) * per_k:.2f}",
         f"{median(lean_mem):,.0f}"],
        *([[f"recon run of {ISSUE_12_TREE} (before issue 12), whole process", f"{n:,}",
            f"{median(old_rate):,.0f}/s", f"{median(old_rate) / median(floor_rate):.2f}",
            f"{median(old_cpu) * per_k:.2f}", f"{median(old_mem):,.0f}"]] if old_rate else []),
        ["recon run, polling phase", f"{n:,}", f"{median(poll_rate):,.0f}/s",
         f"{median(poll_rate) / median(floor_rate):.2f}", "", ""],
        ["sequential httpx (b), scaled", f"{sizes.sequential_sample} sample",
         f"{median(seq_rate):,.0f}/s", f"{median(seq_rate) / median(floor_rate):.3f}", "", ""],
    ]  # fmt: skip
    figures["startup"] = median(startup)
    figures |= {f"hungry_{k}": median(v) for k, v in hungry.items()}
    figures |= {"floor_cpu": median(floor_cpu), "run_cpu": median(run_cpu)}
    figures |= {
        "lean_rate": median(lean_rate),
        "lean_cpu": median(lean_cpu),
        "run_mem": median(run_mem),
        "lean_mem": median(lean_mem),
    }
    if old_rate:
        figures |= {
            "old_rate": median(old_rate),
            "old_cpu": median(old_cpu),
            "old_mem": median(old_mem),
        }
    else:
        _say(f"issue 12's tree not measured: {old_tree}")
    rows += [
        ["http.server stand-in: bare aiohttp loop (a'), whole process", f"{n:,}",
         f"{median(hungry['floor']):,.0f}/s", "", f"{median(hungry['floor_cpu']) * per_k:.2f}",
         ""],
        ["http.server stand-in: recon run, whole process", f"{n:,}",
         f"{median(hungry['run']):,.0f}/s",
         f"{median(hungry['run']) / median(hungry['floor']):.2f} of (a')",
         f"{median(hungry['run_cpu']) * per_k:.2f}", ""],
    ]  # fmt: skip
    return rows, figures


def _cpu_goal(figures: dict[str, float]) -> list[str]:
    """`recon run`'s CPU per payout and whole-process rate against the floor, on both stand-ins."""
    lines = []
    for name, floor, run, floor_cpu, run_cpu in (
        ("uvicorn sandbox", "floor_proc_rate", "run_rate", "floor_cpu", "run_cpu"),
        ("http.server stand-in", "hungry_floor", "hungry_run", "hungry_floor_cpu",
         "hungry_run_cpu"),
    ):  # fmt: skip
        rate = figures[run] / figures[floor]
        cpu = figures[run_cpu] / figures[floor_cpu]
        met = rate >= 0.8 and cpu <= 1.5
        lines.append(
            f"- Goal 3 against the {name}: `recon run` whole process at **{rate:.0%}** of the "
            f"floor's whole process, **{cpu:.2f}x** its CPU per payout "
            f"(**{'met' if met else 'not met'}**: at least 80% and at most 1.5x)."
        )
    return lines


# The last commit before the run became one straight line: the refactor was to be no dearer than
# it, so this tree runs in the same polling rounds (seconds from another day do not compare).
ISSUE_12_TREE = "c58b2f1"


def _issue_12_tree(seeded: list[Seeded], work: Path) -> tuple[Path, Path] | str:
    """ISSUE_12_TREE and its own store of the seeded payouts, or why it cannot be measured."""
    _say(f"unpacking {ISSUE_12_TREE} (before issue 12); its own recon imports the payouts")
    created = datetime.now(UTC).isoformat()
    rows = [
        {
            "transaction_id": p.transaction_id,
            "merchant_reference": p.merchant_reference,
            "amount": str(p.amount),
            "currency": p.currency,
            "created": created,
        }
        for p in seeded
    ]
    try:
        return trees.old_tree_store(ISSUE_12_TREE, rows, work)
    except subprocess.CalledProcessError as exc:  # a clone without the commit
        stderr = exc.stderr.decode(errors="replace").strip()
        return f"git archive {ISSUE_12_TREE} exited {exc.returncode}: {stderr}"
    except OSError as exc:  # no git
        return str(exc)


def _refactor_goal(figures: dict[str, float]) -> list[str]:
    """Main's ratios to the floor against those of the tree before the refactor (no dearer),
    measured in the same rounds (seconds from another day or machine do not compare)."""
    if "old_rate" not in figures:
        return [f"- Issue 12 (not worse than {ISSUE_12_TREE}): not measured (see the log)."]
    old_of_floor = figures["old_rate"] / figures["floor_proc_rate"]
    old_cpu_x = figures["old_cpu"] / figures["floor_cpu"]
    lines = []
    for label, rate, cpu, mem in (
        ("`recon run`", "run_rate", "run_cpu", "run_mem"),
        (f"`recon run` without report.xlsx (the work of {ISSUE_12_TREE}, which wrote none)",
         "lean_rate", "lean_cpu", "lean_mem"),
    ):  # fmt: skip
        of_floor = figures[rate] / figures["floor_proc_rate"]
        cpu_x = figures[cpu] / figures["floor_cpu"]
        met = (
            of_floor >= old_of_floor - 0.02
            and cpu_x <= old_cpu_x * 1.02
            and figures[mem] <= figures["old_mem"] * 1.05
        )
        lines.append(
            f"- Issue 12 (not worse than {ISSUE_12_TREE}, the tree before it, in the same rounds: "
            f"{old_of_floor:.0%} of the floor's whole process, {old_cpu_x:.2f}x its CPU per "
            f"payout, {figures['old_mem']:.0f} MB), {label}: **{of_floor:.0%}**, "
            f"**{cpu_x:.2f}x**, **{figures[mem]:.0f} MB** (**{'met' if met else 'not met'}**; a "
            "margin of 2% on the ratios and 5% on memory for the machine's noise)."
        )
    return lines


def bench_rate_limit(url: str, sizes: Sizes, work: Path) -> list[list[str]]:
    """recon run with RECON_RATE_LIMIT=R against the sandbox limited to R requests a second."""
    rate = sizes.rate_limit
    seeded = polling.seed(url, sizes.rate_payouts, work)
    store = polling.make_store(seeded, work, "rate")
    rates, shares = [], []
    for round_ in range(sizes.rounds):
        _say(f"rate limit round {round_ + 1}/{sizes.rounds}")
        set_faults(url, latency_ms=20, rate_limit_rps=rate)  # also refills the sandbox's bucket
        run = polling.recon_run(url, store, work, RECON_RATE_LIMIT=f"{rate:g}")
        # Every request beyond one per payout and the one authorization was a 429 retried.
        refused = max(0, run.requests - run.polled - 1)
        rates.append(run.poll_rate)
        shares.append(refused / max(run.requests, 1))
    set_faults(url, rate_limit_rps=None)
    return [
        [f"{rate:g}/s", f"{store.count:,}", f"{median(rates):,.1f}/s",
         f"{median(rates) / rate:.1%}", f"{median(shares):.2%}"],
    ]  # fmt: skip


# A PostgreSQL step is stopped after this long: 5x the 60 s goal shows how far off a step is,
# without waiting hours for one whose time grows with the square of the rows.
POSTGRES_STEP_LIMIT_S = 300.0


def _scale_row(step: str, n: int, store: str, runs: list[Measured], limit: float) -> list[str]:
    """A scale table row: medians of ``runs``, or the one run that was stopped or failed."""
    last = runs[-1]
    if last.returncode != 0:
        ended = (
            f"stopped at {limit:.0f}" if last.seconds >= limit else f"failed ({last.returncode})"
        )
        return [step, f"{n:,}", store, ended, f"{last.cpu_seconds:.1f}",
                f"{last.peak_mb:,.0f}", f"{last.peak_mb * 1024 / n:,.2f}"]  # fmt: skip
    peak = median([r.peak_mb for r in runs])
    return [step, f"{n:,}", store, f"{median([r.seconds for r in runs]):.1f}",
            f"{median([r.cpu_seconds for r in runs]):.1f}", f"{peak:,.0f}",
            f"{peak * 1024 / n:,.2f}"]  # fmt: skip


Rounds = tuple[list[Measured], list[Measured]]  # (imports, reports)


def _scale_sqlite(n: int, csv_path: Path, sizes: Sizes, work: Path) -> Rounds:
    """Import and report rounds on a SQLite file (a new file for each import)."""
    db = work / f"scale-{n}.db"
    url = f"sqlite:///{db}"
    imports = []
    for round_ in range(sizes.scale_rounds):
        _say(f"SQLite: import {n:,} rows, round {round_ + 1}/{sizes.scale_rounds}")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        imports.append(scale.import_csv(url, csv_path))
    scale.write_history(url)
    reports = []
    for round_ in range(sizes.scale_rounds):
        _say(f"SQLite: report over {n:,} payouts, round {round_ + 1}/{sizes.scale_rounds}")
        reports.append(scale.report(url, work))
    return imports, reports


def _scale_postgres(
    n: int, csv_path: Path, sizes: Sizes, work: Path, server: PostgresServer, notes: list[str]
) -> Rounds:
    """Import and report rounds in a throwaway PostgreSQL database, emptied before each import.

    A round that is stopped (``POSTGRES_STEP_LIMIT_S``) or fails ends that step's rounds. If no
    import finished, the report still runs, over the same payouts stored with plain INSERTs.
    """
    limit = POSTGRES_STEP_LIMIT_S
    with throwaway_database(server.url, str(n)) as db:
        imports: list[Measured] = []
        for round_ in range(sizes.scale_rounds):
            _say(f"PostgreSQL: import {n:,} rows, round {round_ + 1}/{sizes.scale_rounds}")
            if round_:
                db.reset()
            imports.append(scale.import_csv(db.url, csv_path, timeout=limit, check=False))
            if imports[-1].returncode != 0:
                notes.append(_ended(f"PostgreSQL import of {n:,} rows", round_, imports[-1]))
                _say(notes[-1])
                db.reset()
                scale.load_payouts(db.url, csv_path)
                notes.append(
                    f"The PostgreSQL report over {n:,} payouts ran on the same payouts stored "
                    "with plain INSERTs (`bench/scale.py` `load_payouts`)."
                )
                break
        scale.write_history(db.url)
        reports: list[Measured] = []
        for round_ in range(sizes.scale_rounds):
            _say(f"PostgreSQL: report over {n:,} payouts, round {round_ + 1}/{sizes.scale_rounds}")
            reports.append(scale.report(db.url, work, timeout=limit, check=False))
            if reports[-1].returncode != 0:
                what = f"PostgreSQL report over {n:,} payouts"
                notes.append(_ended(what, round_, reports[-1]))
                _say(notes[-1])
                break
    return imports, reports


def _ended(what: str, round_: int, run: Measured) -> str:
    """Why a PostgreSQL step has no median: stopped at the limit, or failed (its last words)."""
    if run.seconds >= POSTGRES_STEP_LIMIT_S:
        return f"{what}: stopped after {POSTGRES_STEP_LIMIT_S:.0f} s in round {round_ + 1}."
    last = (run.stderr.strip().splitlines() or ["no message"])[-1]
    return f"{what}: exited {run.returncode} after {run.seconds:.0f} s: `{last[:300]}`."


def bench_scale(
    sizes: Sizes, work: Path, server: PostgresServer
) -> tuple[list[list[str]], list[str], str]:
    """Import and report at each size, SQLite then PostgreSQL (when ``server`` has a URL).

    Returns the table rows, notes on PostgreSQL steps that did not finish, and the smallest
    size's SQLite URL for the profile.
    """
    rows: list[list[str]] = []
    notes: list[str] = []
    first_url = ""
    for n in sizes.scale:
        csv_path = work / f"payouts-{n}.csv"
        scale.write_csv(csv_path, n)
        lite = _scale_sqlite(n, csv_path, sizes, work)
        pg = _scale_postgres(n, csv_path, sizes, work, server, notes) if server.url else None
        csv_path.unlink()
        for i, step in enumerate(("import CSV", "report")):
            rows.append(_scale_row(step, n, "SQLite", lite[i], float("inf")))
            if pg is not None:
                rows.append(_scale_row(step, n, "PostgreSQL", pg[i], POSTGRES_STEP_LIMIT_S))
        first_url = first_url or f"sqlite:///{work / f'scale-{n}.db'}"
    return rows, notes, first_url


def bench_export(sizes: Sizes, work: Path) -> tuple[list[list[str]], list[str]]:
    """``recon export payouts`` (CSV, then xlsx) of every payout of each SQLite scale store: the
    full-history export, which streams, so its peak memory must not follow the rows."""
    rows: list[list[str]] = []
    peaks: dict[str, list[float]] = {}
    for n in sizes.scale:
        url = f"sqlite:///{work / f'scale-{n}.db'}"
        scale.set_outcomes(url)
        for fmt in ("csv", "xlsx"):
            _say(f"SQLite: export {n:,} payouts as {fmt}")
            run = scale.export(url, work, fmt)
            rows.append(_scale_row(f"export {fmt}", n, "SQLite", [run], float("inf")))
            peaks.setdefault(fmt, []).append(run.peak_mb)
    small, large = sizes.scale[0], sizes.scale[-1]
    lines = []
    for fmt, (first, *_, last) in peaks.items():
        growth = last / first
        lines.append(
            f"- Goal 2, `recon export payouts --format {fmt}` in constant memory: peak "
            f"**{last:,.0f} MB** for {large:,} payouts against {first:,.0f} MB for {small:,} "
            f"(**{growth:.2f}x** for {large // small}x the rows; "
            f"**{'met' if growth <= 1.25 else 'not met'}**: within 1.25x)."
        )
    return rows, lines


def _export_stores(sizes: Sizes, work: Path) -> None:
    """The SQLite scale stores alone (one import each, then the generated history), for
    ``--only-export``; ``bench_scale`` leaves the same files behind."""
    for n in sizes.scale:
        csv_path = work / f"payouts-{n}.csv"
        scale.write_csv(csv_path, n)
        _say(f"SQLite: import {n:,} rows for the export")
        scale.import_csv(f"sqlite:///{work / f'scale-{n}.db'}", csv_path)
        scale.write_history(f"sqlite:///{work / f'scale-{n}.db'}")
        csv_path.unlink()


def _export_section(rows: list[list[str]], goal: list[str]) -> list[str]:
    """The full-history export and the goals written on paper."""
    return [
        "## Full-history export, and issue 16's goals on paper",
        "",
        "`recon export payouts --since` the first generated day (every payout) of each SQLite "
        "scale store, its payouts given their generated outcome (the export reads the payouts' "
        "own columns), one round each.",
        "",
        *_table(SCALE_HEADER, rows),
        "",
        *goal,
        "- Goal 2, the night's reports cover the night: report.html, the email and the CSV pack "
        "hold the open payouts, tonight's changes, the open and acknowledged exceptions, the "
        "returns and the window's totals (`RECON_REPORT_DAYS`, month-to-date per currency); "
        "their time and memory are the steady-state nights' (**met** as a feature; "
        "`tests/integration/test_report_window.py` on every database).",
        "- Goal 5: docs/scaling.md says where one host stops and how a merchant goes past it, "
        "from the steady-state nights' figures (**met** on paper; a document, not a "
        "measurement).",
    ]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    right = ["---:" if i else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(right) + " |"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


SCALE_HEADER = ["step", "payouts", "store", "seconds", "CPU s", "peak MB", "KB / payout"]


def _postgres_text(server: PostgresServer) -> str:
    """Where the PostgreSQL rows come from, or why there are none."""
    if not server.url:
        return (
            f"PostgreSQL: not measured ({server.reason}). `make bench` uses "
            "`$RECON_BENCH_POSTGRES_URL`, else `$RECON_TEST_POSTGRES_URL`, else the local server "
            "`postgresql+psycopg://postgres@127.0.0.1:5432/test`."
        )
    return (
        f"PostgreSQL: server {server.shown}; every figure in a throwaway database "
        "`recon_bench_<pid>_<payouts>` created there (empty again before each import) and "
        f"dropped at the end. A PostgreSQL step is stopped after {POSTGRES_STEP_LIMIT_S:.0f} s."
    )


STEADY_BEGIN = "<!-- steady state: begin (bench/run.py --only-steady rewrites this part) -->"
STEADY_END = "<!-- steady state: end -->"
ROLLFORWARD_BEGIN = (
    "<!-- roll-forward: begin (bench/run.py --only-rollforward rewrites this part) -->"
)
ROLLFORWARD_END = "<!-- roll-forward: end -->"
JOURNAL_BEGIN = "<!-- journal: begin (bench/run.py --only-journal rewrites this part) -->"
JOURNAL_END = "<!-- journal: end -->"
PROVIDER_EXPORT_BEGIN = (
    "<!-- provider export: begin (bench/run.py --only-provider-export rewrites this part) -->"
)
PROVIDER_EXPORT_END = "<!-- provider export: end -->"
EXPORT_BEGIN = "<!-- export: begin (bench/run.py --only-export rewrites this part) -->"
EXPORT_END = "<!-- export: end -->"
FINDINGS = "## Findings"  # where the hand-written part of BENCHMARKS.md begins
CPU_BEGIN = "<!-- cpu: begin (bench/run.py --only-cpu rewrites this part) -->"
CPU_END = "<!-- cpu: end -->"


def _splice(out: Path, begin: str, end: str, section: list[str]) -> None:
    """Put ``section`` between ``begin`` and ``end`` in ``out`` (before the findings if new)."""
    block = "\n".join([begin, *section, end])
    text = out.read_text(encoding="utf-8") if out.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        head, sep, rest = text.partition(FINDINGS)
        text = (head + block + "\n\n" + sep + rest) if sep else (text.rstrip() + "\n\n" + block)
    out.write_text(text.rstrip() + "\n", encoding="utf-8")
    print("\n".join(section))


def _measured_by(flag: str, quick: bool, started: float) -> str:
    m = machine()
    return (
        f"Measured by `bench/run.py {flag}{' --quick' if quick else ''}` on "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {(time.monotonic() - started) / 60:.1f} "
        f"minutes ({m['cores']} cores, {m['memory']}; the machine was shared with other work, "
        "so compare ratios within this section, not seconds with other sections)."
    )


def _only_steady(
    out: Path, sizes: nights.SteadySizes, server: PostgresServer, started: float, *, quick: bool
) -> None:
    """Measure the steady-state nights alone and put their section into ``out``."""
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = nights.bench_steady(sizes, Path(tmp), server, _say)
    section = [
        *nights.markdown(results, sizes),
        _measured_by("--only-steady", quick, started)
        + (
            f" PostgreSQL: server {server.shown}, each store in a throwaway database "
            "`recon_bench_<pid>_steady<days>` created for it and dropped after its night."
            if server.url
            else f" PostgreSQL: not measured ({server.reason})."
        ),
    ]
    _splice(out, STEADY_BEGIN, STEADY_END, section)
    _say(f"wrote the steady-state section of {out}")


def _only_rollforward(out: Path, per_day: int, server: PostgresServer, started: float,
                      *, quick: bool) -> None:  # fmt: skip
    """The roll-forward's cost at each history length alone: its section of ``out``."""
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = rollforward.bench_rollforward(per_day, Path(tmp), server, _say)
    section = [
        *rollforward.markdown(results, per_day),
        "",
        _measured_by("--only-rollforward", quick, started),
    ]
    _splice(out, ROLLFORWARD_BEGIN, ROLLFORWARD_END, section)
    _say(f"wrote the roll-forward section of {out}")


def _only_journal(out: Path, per_day: int, started: float, *, quick: bool) -> None:
    """The night's journal step over growing stores alone: its section of ``out``."""
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = journal.bench_journal(per_day, Path(tmp), _say)
    section = [
        *journal.markdown(results, per_day),
        "",
        _measured_by("--only-journal", quick, started),
    ]
    _splice(out, JOURNAL_BEGIN, JOURNAL_END, section)
    _say(f"wrote the journal section of {out}")


def _only_provider_export(out: Path, started: float, *, quick: bool) -> None:
    """A night at 100,000 new payouts with the provider's export alone: its section of ``out``."""
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        results = provider_export.bench_provider_export(Path(tmp), _say, quick=quick)
    section = [
        *provider_export.markdown(results),
        "",
        _measured_by("--only-provider-export", quick, started),
    ]
    _splice(out, PROVIDER_EXPORT_BEGIN, PROVIDER_EXPORT_END, section)
    _say(f"wrote the provider export section of {out}")


def _only_export(out: Path, sizes: Sizes, started: float, *, quick: bool) -> None:
    """The full-history export at each scale size alone: its section of ``out``."""
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        _export_stores(sizes, Path(tmp))
        rows, goal = bench_export(sizes, Path(tmp))
    section = [*_export_section(rows, goal), "", _measured_by("--only-export", quick, started)]
    _splice(out, EXPORT_BEGIN, EXPORT_END, section)
    _say(f"wrote the export section of {out}")


def _only_cpu(out: Path, sizes: Sizes, started: float, *, quick: bool) -> None:
    """The polling rounds alone (uvicorn sandbox and http.server stand-in): CPU per payout."""
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp, sandbox_process() as sandbox:
        rows, figures = bench_polling(sandbox.url, sizes, Path(tmp))
    header = ["client", "payouts", "rate", "x (a)", "CPU s / 1,000", "peak MB"]
    section = [
        "## CPU per payout: the uvicorn sandbox and a CPU-hungry stand-in",
        "",
        f"The polling rounds alone ({sizes.payouts:,} open payouts, 20 ms latency, concurrency "
        f"50, {sizes.rounds} round(s)): the bare aiohttp loop and `recon run --no-email` against "
        "the uvicorn sandbox, then against `bench/standin.py` (`http.server.ThreadingHTTPServer` "
        "serving the sandbox's own answers, read from it once) in its own process on the same "
        "cores.",
        "",
        *_table(header, rows),
        "",
        *_cpu_goal(figures),
        *_refactor_goal(figures),
        "",
        _measured_by("--only-cpu", quick, started),
    ]
    _splice(out, CPU_BEGIN, CPU_END, section)
    _say(f"wrote the CPU section of {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one round")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile section")
    parser.add_argument(
        "--only-steady",
        action="store_true",
        help="only the steady-state nights, replacing that section of an existing --out file",
    )
    parser.add_argument(
        "--only-export",
        action="store_true",
        help="only the full-history export (goal 2), replacing that section of an existing --out",
    )
    parser.add_argument(
        "--only-cpu",
        action="store_true",
        help="only the polling rounds (goal 3), replacing that section of an existing --out file",
    )
    parser.add_argument(
        "--only-journal",
        action="store_true",
        help="only the night's journal step, replacing that section of an existing --out file",
    )
    parser.add_argument(
        "--only-rollforward",
        action="store_true",
        help="only the roll-forward's cost, replacing that section of an existing --out file",
    )
    parser.add_argument(
        "--only-provider-export",
        action="store_true",
        help="only the provider's export at 100,000 payouts, replacing that section of --out",
    )
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    steady_sizes = nights.QUICK if args.quick else nights.FULL
    started = time.monotonic()
    compile_tree()
    server = postgres_server()
    _say(f"PostgreSQL: {server.shown or 'not measured: ' + server.reason}")
    if args.only_steady:
        _only_steady(args.out, steady_sizes, server, started, quick=args.quick)
        return
    if args.only_rollforward:
        _only_rollforward(args.out, steady_sizes.per_day, server, started, quick=args.quick)
        return
    if args.only_journal:
        _only_journal(args.out, steady_sizes.per_day, started, quick=args.quick)
        return
    if args.only_provider_export:
        _only_provider_export(args.out, started, quick=args.quick)
        return
    if args.only_cpu:
        _only_cpu(args.out, sizes, started, quick=args.quick)
        return
    if args.only_export:
        _only_export(args.out, sizes, started, quick=args.quick)
        return
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        work = Path(tmp)
        with sandbox_process() as sandbox:
            cpu_before = sandbox.cpu_seconds()
            poll_rows, figures = bench_polling(sandbox.url, sizes, work)
            sandbox_cpu = sandbox.cpu_seconds() - cpu_before
            rate_rows = bench_rate_limit(sandbox.url, sizes, work)
        scale_rows, scale_notes, profile_url = bench_scale(sizes, work, server)
        steady = nights.bench_steady(steady_sizes, work, server, _say)
        rolled = rollforward.bench_rollforward(steady_sizes.per_day, work, server, _say)
        booked = journal.bench_journal(steady_sizes.per_day, work, _say)
        exported = provider_export.bench_provider_export(work, _say, quick=args.quick)
        profile: list[str] = []
        if not args.no_profile:
            _say("profiling recon report")
            with tempfile.TemporaryDirectory(dir=work) as out:
                profile = profile_command(
                    ["report", "--out", out], {"RECON_DATABASE_URL": profile_url}
                )
        # Last: it gives the scale stores' payouts their outcomes, which the report rounds and
        # the profile above measured without.
        export_rows, export_goal = bench_export(sizes, work)
    elapsed = time.monotonic() - started

    m = machine()
    goal_a = figures["run_rate"] / figures["floor_rate"]
    like_for_like = figures["run_rate"] / figures["floor_proc_rate"]
    goal_b = figures["run_rate"] / figures["seq_rate"]
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` (`bench/run.py{' --quick' if args.quick else ''}`) on "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {elapsed / 60:.1f} minutes. Machine: "
        f"{m['cores']} cores ({m['cpu']}), {m['memory']} memory, Python {m['python']}, "
        f"{m['system']}. Each figure is the median of {sizes.rounds} round(s) "
        f"({sizes.scale_rounds} for the scale figures); ratios compare figures of the same "
        "rounds.",
        "",
        "## Polling",
        "",
        f"{sizes.payouts:,} open payouts in a SQLite store; the sandbox in its own process "
        "answering `transaction.get` after 20 ms; concurrency 50 (`RECON_CONCURRENCY=50`). "
        "`recon run --no-email` is the whole command as a process: start-up, selection, polling, "
        "observations, classification, outcomes and history, every report file. Rates are "
        "payouts per second. The floor (a) is given two ways: its fetching alone (its own clock, "
        "after start-up and authorization), and its whole process like `recon run`'s.",
        "",
        *_table(["client", "payouts", "rate", "x (a)", "CPU s / 1,000", "peak MB"], poll_rows),
        "",
        f"- Goal `recon run` >= 80% of (a): whole process against (a)'s fetching alone "
        f"**{goal_a:.0%}** ({'met' if goal_a >= 0.8 else 'not met'}); against (a)'s whole "
        f"process **{like_for_like:.0%}** ({'met' if like_for_like >= 0.8 else 'not met'}); "
        f"polling phase against (a)'s fetching {figures['poll_rate'] / figures['floor_rate']:.0%}.",
        f"- Goal `recon run` >= 30x (b): **{goal_b:.1f}x** "
        f"({'met' if goal_b >= 30 else 'not met'}); polling phase alone "
        f"{figures['poll_rate'] / figures['seq_rate']:.1f}x.",
        f"- Outside the run's own clock (which stops after classification): start-up, applying "
        f"outcomes and history, writing the reports: {figures['startup']:.1f} s per run. The "
        f"sandbox used {sandbox_cpu:.1f} CPU s over all polling rounds.",
        *_cpu_goal(figures),
        *_refactor_goal(figures),
        "- (a') is the same bare loop against the CPU-hungry stand-in (`bench/standin.py`: "
        "`http.server.ThreadingHTTPServer` serving the sandbox's own answers, read from it once, "
        "after 20 ms), in its own process on the same cores; both measured in the same rounds.",
        "",
        "## Rate limit",
        "",
        "The sandbox answers 429 with `Retry-After` above R requests a second; recon runs with "
        "`RECON_RATE_LIMIT=R` (20 ms latency, concurrency 50). 429s are counted as the requests "
        "beyond one per payout and the one authorization (the only retries in this setup).",
        "",
        *_table(["R", "payouts", "achieved", "of R", "answered 429"], rate_rows),
        "",
        "Goal: >= 95% of R with <= 1% of requests answered 429.",
        "",
        "## Scale",
        "",
        "Import: `recon import payouts FILE` of a generated CSV into an empty store. Report: "
        "`recon report` (every report file) over a store whose history was generated in SQL "
        "(see `bench/scale.py`). CPU s and peak MB are recon's process only, not the database "
        "server's.",
        "",
        _postgres_text(server),
        "",
        *_table(SCALE_HEADER, scale_rows),
        "",
        *[f"- {note}" for note in scale_notes],
        *([""] if scale_notes else []),
        "Goal: each under 60 s with peak memory under 1 GB (1,024 MB).",
        "",
        EXPORT_BEGIN,
        *_export_section(export_rows, export_goal),
        EXPORT_END,
        "",
        STEADY_BEGIN,
        *nights.markdown(steady, steady_sizes),
        STEADY_END,
        "",
        ROLLFORWARD_BEGIN,
        *rollforward.markdown(rolled, steady_sizes.per_day),
        ROLLFORWARD_END,
        "",
        JOURNAL_BEGIN,
        *journal.markdown(booked, steady_sizes.per_day),
        JOURNAL_END,
        "",
        PROVIDER_EXPORT_BEGIN,
        *provider_export.markdown(exported),
        PROVIDER_EXPORT_END,
        "",
    ]
    if profile:
        lines += [
            f"## Profile: `recon report` over {sizes.scale[0]:,} payouts (cProfile)",
            "",
            "```",
            *profile,
            "```",
            "",
        ]
    # The findings below the tables are written by hand: kept as the file has them.
    previous = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    _, heading, findings = previous.partition(FINDINGS)
    if heading:
        lines += [(heading + findings).rstrip(), ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines[: lines.index("## Rate limit")]))
    print("\n".join(_table(["R", "payouts", "achieved", "of R", "answered 429"], rate_rows)))
    print("\n".join(_table(SCALE_HEADER, scale_rows)))
    _say(f"wrote {args.out} in {elapsed / 60:.1f} minutes")


if __name__ == "__main__":
    main()
