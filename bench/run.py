"""recon's benchmark suite (``make bench``): polling, scale and rate limits; writes BENCHMARKS.md.

Not a test: nothing here asserts. Every figure is the median of several rounds, each round
measuring the things it compares back to back against the same sandbox, so ratios come from the
same conditions. ``--quick`` uses small sizes and one round, to smoke-test the script in seconds.

The sandbox runs in its own process (``recon sandbox serve``); every measured client (``recon
run``, ``recon import``, ``recon report``, the reference loops) is its own process too, measured
with ``os.wait4`` (CPU seconds, peak resident memory). The hand-written analysis in
``bench/findings.md`` is appended to the generated tables.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/run.py`

from bench import polling, scale
from bench.profiling import profile_command
from bench.support import ROOT, machine, median, sandbox_process, set_faults


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
    set_faults(url, latency_ms=20)
    floor_rate, run_rate, poll_rate, seq_rate = [], [], [], []
    run_cpu, run_mem, floor_cpu, floor_mem, startup = [], [], [], [], []
    for round_ in range(sizes.rounds):
        _say(f"polling round {round_ + 1}/{sizes.rounds}")
        floor = polling.floor_run(url, store)
        floor_rate.append(store.count / floor.json()["seconds"])
        floor_cpu.append(floor.cpu_seconds)
        floor_mem.append(floor.peak_mb)
        run = polling.recon_run(url, store, work)
        run_rate.append(store.count / run.process.seconds)
        poll_rate.append(run.poll_rate)
        run_cpu.append(run.process.cpu_seconds)
        run_mem.append(run.process.peak_mb)
        startup.append(run.process.seconds - float(run.counts.get("seconds", 0)))
        seq = polling.sequential_run(url, store, sizes.sequential_sample)
        seq_rate.append(sizes.sequential_sample / seq.json()["seconds"])
    n = store.count
    figures = {
        "floor_rate": median(floor_rate),
        "run_rate": median(run_rate),
        "poll_rate": median(poll_rate),
        "seq_rate": median(seq_rate),
    }
    per_k = 1000 / n
    rows = [
        ["bare aiohttp loop (a)", f"{n:,}", f"{median(floor_rate):,.0f}/s", "1.00",
         f"{median(floor_cpu) * per_k:.2f}", f"{median(floor_mem):,.0f}"],
        ["recon run, whole process", f"{n:,}", f"{median(run_rate):,.0f}/s",
         f"{median(run_rate) / median(floor_rate):.2f}", f"{median(run_cpu) * per_k:.2f}",
         f"{median(run_mem):,.0f}"],
        ["recon run, polling phase", f"{n:,}", f"{median(poll_rate):,.0f}/s",
         f"{median(poll_rate) / median(floor_rate):.2f}", "", ""],
        ["sequential httpx (b), scaled", f"{sizes.sequential_sample} sample",
         f"{median(seq_rate):,.0f}/s", f"{median(seq_rate) / median(floor_rate):.3f}", "", ""],
    ]  # fmt: skip
    figures["startup"] = median(startup)
    return rows, figures


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


def bench_scale(sizes: Sizes, work: Path) -> tuple[list[list[str]], str]:
    """Import and report at each size; the smallest size's database URL for the profile."""
    rows: list[list[str]] = []
    first_url = ""
    for n in sizes.scale:
        csv_path = work / f"payouts-{n}.csv"
        scale.write_csv(csv_path, n)
        db = work / f"scale-{n}.db"
        url = f"sqlite:///{db}"
        imports = []
        for round_ in range(sizes.scale_rounds):
            _say(f"import {n:,} rows, round {round_ + 1}/{sizes.scale_rounds}")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            imports.append(scale.import_csv(url, csv_path))
        scale.write_history(url)
        reports = []
        for round_ in range(sizes.scale_rounds):
            _say(f"report over {n:,} payouts, round {round_ + 1}/{sizes.scale_rounds}")
            reports.append(scale.report(url, work))
        csv_path.unlink()
        for label, runs in (("import CSV", imports), ("report", reports)):
            rows.append(
                [label, f"{n:,}", f"{median([r.seconds for r in runs]):.1f}",
                 f"{median([r.cpu_seconds for r in runs]):.1f}",
                 f"{median([r.peak_mb for r in runs]):,.0f}",
                 f"{median([r.peak_mb for r in runs]) * 1024 / n:,.2f}"]
            )  # fmt: skip
        first_url = first_url or url
    return rows, first_url


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    right = ["---:" if i else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(right) + " |"]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one round")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile section")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
        work = Path(tmp)
        with sandbox_process() as sandbox:
            cpu_before = sandbox.cpu_seconds()
            poll_rows, figures = bench_polling(sandbox.url, sizes, work)
            sandbox_cpu = sandbox.cpu_seconds() - cpu_before
            rate_rows = bench_rate_limit(sandbox.url, sizes, work)
        scale_rows, profile_url = bench_scale(sizes, work)
        profile: list[str] = []
        if not args.no_profile:
            _say("profiling recon report")
            with tempfile.TemporaryDirectory(dir=work) as out:
                profile = profile_command(
                    ["report", "--out", out], {"RECON_DATABASE_URL": profile_url}
                )
    elapsed = time.monotonic() - started

    m = machine()
    goal_a = figures["run_rate"] / figures["floor_rate"]
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
        "payouts per second.",
        "",
        *_table(["client", "payouts", "rate", "x (a)", "CPU s / 1,000", "peak MB"], poll_rows),
        "",
        f"- Goal `recon run` >= 80% of (a): **{goal_a:.0%}** "
        f"({'met' if goal_a >= 0.8 else 'not met'}); polling phase alone "
        f"{figures['poll_rate'] / figures['floor_rate']:.0%}.",
        f"- Goal `recon run` >= 30x (b): **{goal_b:.1f}x** "
        f"({'met' if goal_b >= 30 else 'not met'}); polling phase alone "
        f"{figures['poll_rate'] / figures['seq_rate']:.1f}x.",
        f"- Outside the run's own clock (which stops after classification): start-up, applying "
        f"outcomes and history, writing the reports: {figures['startup']:.1f} s per run. The "
        f"sandbox used {sandbox_cpu:.1f} CPU s over all polling rounds.",
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
        "## Scale (SQLite)",
        "",
        "Import: `recon import payouts FILE` of a generated CSV into an empty store. Report: "
        "`recon report` (every report file) over a store whose history was generated in SQL "
        "(see `bench/scale.py`). PostgreSQL: not measured here (`RECON_TEST_POSTGRES_URL` is "
        "not set on this machine; see findings).",
        "",
        *_table(["step", "payouts", "seconds", "CPU s", "peak MB", "KB / payout"], scale_rows),
        "",
        "Goal: each under 60 s with peak memory under 1 GB (1,024 MB).",
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
    findings = ROOT / "bench" / "findings.md"
    if findings.exists():
        lines += [findings.read_text(encoding="utf-8").rstrip(), ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines[: lines.index("## Rate limit")]))
    print("\n".join(_table(["R", "payouts", "achieved", "of R", "answered 429"], rate_rows)))
    print("\n".join(_table(["step", "payouts", "seconds", "CPU s", "peak MB", "KB / payout"],
                           scale_rows)))  # fmt: skip
    _say(f"wrote {args.out} in {elapsed / 60:.1f} minutes")


if __name__ == "__main__":
    main()
