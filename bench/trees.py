"""Checkouts of recon under the same conditions: ``recon run`` of each, in turn, and the floor.

Not part of ``make bench``: a tool for "is this change cheaper than that commit", e.g. ::

    git worktree add --detach /tmp/recon-old c58b2f1
    python bench/trees.py /tmp/recon-old [/tmp/recon-other ...] --payouts 10000 --server fast

Both trees run with this interpreter (this venv's packages) and their own ``recon`` package
(``python -m recon`` with the tree as working directory and ``PYTHONPATH``). Each tree imports the
same generated CSV into its own template store once (its own migrations); every measured run gets
a fresh copy. The ids are the stand-in's generated ones (``bench/standin.py``: ``tx<n><kind>``,
answered by rule; the mix of :mod:`bench.steady`), so no sandbox has to create them first, and
``--as-of`` is a day after they were created, so no payout is stale for either tree.

``--server fast`` is the stand-in on aiohttp (cheap, no latency); ``http`` the CPU-hungry
``http.server`` stand-in with 20 ms latency. Every round measures the floor
(``bench/floor.py aiohttp``), then each tree's ``recon run --no-email``, in turn; the table gives
medians and the CPU seconds of every round.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/trees.py`

from bench.standin import generated_amount
from bench.support import (
    PYTHON,
    ROOT,
    Measured,
    compile_tree,
    copy_sqlite,
    measure,
    median,
    standin_process,
)

CREATED = 1_700_000_000  # the stand-in's generated payouts are created in the day after this
AS_OF = CREATED + 2 * 86_400
FLOOR = str(ROOT / "bench" / "floor.py")


def kind_of(n: int) -> str:
    """The stand-in's kind of generated payout ``n``: mostly settled, a few of every other."""
    slot = n % 1000
    if slot < 20:
        return "f"
    if slot < 30:
        return "a"
    if slot < 32:
        return "m"
    if slot < 34:
        return "u"
    if slot < 70:
        return "p"
    return "s"


def write_csv(path: Path, count: int) -> list[str]:
    """The payout CSV of ``count`` generated payouts; their ids."""
    ids = []
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["transaction_id", "merchant_reference", "amount", "currency", "created"])
        for n in range(count):
            tid = f"tx{n}{kind_of(n)}"
            created = datetime.fromtimestamp(CREATED + n % 86_400, UTC).isoformat()
            writer.writerow([tid, f"ref-{n}", str(generated_amount(n)), "EUR", created])
            ids.append(tid)
    return ids


def _env(tree: Path, db: Path, **extra: str) -> dict[str, str]:
    return {
        "PYTHONPATH": str(tree),
        "RECON_DATABASE_URL": f"sqlite:///{db}",
        "RECON_TIMEZONE": "UTC",
        "RECON_SMTP_HOST": "",
        **extra,
    }


def template(tree: Path, payouts_csv: Path, work: Path, name: str) -> Path:
    """``tree``'s own store holding the CSV's payouts, imported by its own ``recon import``."""
    db = work / f"{name}.db"
    measure(
        [PYTHON, "-m", "recon", "import", "payouts", str(payouts_csv)],
        env=_env(tree, db),
        cwd=tree,
    )
    return db


def run_tree(
    tree: Path, store: Path, base_url: str, work: Path, *, as_of: int | None = AS_OF, **extra: str
) -> tuple[Measured, dict]:
    """One ``recon run --no-email`` of ``tree`` on a fresh copy of ``store`` (``as_of``: None
    is now)."""
    db = work / "run.db"
    copy_sqlite(store, db)
    with tempfile.TemporaryDirectory(dir=work) as out:
        env = _env(tree, db, RECON_API_BASE_URL=base_url, RECON_CONCURRENCY="50", **extra)
        cmd = [PYTHON, "-m", "recon", "run", "--no-email", "--out", out]
        if as_of is not None:
            cmd += ["--as-of", str(as_of)]
        measured = measure(cmd, env=env, cwd=tree, check=False)
    if measured.returncode not in (0, 3):
        raise RuntimeError(f"{tree}: recon run exited {measured.returncode}:\n{measured.stderr}")
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT counts FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    return measured, json.loads(text)


def archived(commit: str, work: Path) -> Path:
    """``commit``'s tree, unpacked from this repository by ``git archive`` into ``work``."""
    target = work / f"tree-{commit}"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit],
        check=True,
        capture_output=True,
    )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(target, filter="data")
    compile_tree(target)
    return target


def old_tree_store(commit: str, rows: list[dict[str, str]], work: Path) -> tuple[Path, Path]:
    """``commit``'s tree and its own store of ``rows`` (payout CSV rows), imported by its own
    ``recon import payouts``, so its store is what its own migrations make."""
    tree = archived(commit, work)
    payouts_csv = work / f"payouts-{commit}.csv"
    with payouts_csv.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return tree, template(tree, payouts_csv, work, f"store-{commit}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "others", type=Path, nargs="+", help="the other checkouts (this one is the new)"
    )
    parser.add_argument("--payouts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server", choices=["fast", "http"], default="fast")
    parser.add_argument(
        "--without-workbook",
        action="store_true",
        help="also run this tree with RECON_REPORT_WORKBOOK=off (as new-no-xlsx): the work of "
        "a tree from before report.xlsx",
    )
    args = parser.parse_args()
    trees = {path.resolve().name: path.resolve() for path in args.others}
    trees["new"] = ROOT
    for tree in trees.values():
        compile_tree(tree)
    variants: dict[str, tuple[str, dict[str, str]]] = {name: (name, {}) for name in trees}
    if args.without_workbook:
        variants["new-no-xlsx"] = ("new", {"RECON_REPORT_WORKBOOK": "off"})
    with tempfile.TemporaryDirectory(prefix="recon-trees-") as tmp:
        work = Path(tmp)
        payouts_csv = work / "payouts.csv"
        ids = write_csv(payouts_csv, args.payouts)
        ids_file = work / "ids"
        ids_file.write_text("\n".join(ids) + "\n")
        stores = {name: template(tree, payouts_csv, work, name) for name, tree in trees.items()}
        fast = args.server == "fast"
        runs: dict[str, list[Measured]] = {"floor": [], **{name: [] for name in variants}}
        with standin_process(fast=fast, latency_ms=0 if fast else 20) as server:
            for i in range(args.rounds):
                floor = measure([PYTHON, FLOOR, "aiohttp", server.url, str(ids_file)])
                runs["floor"].append(floor)
                for name, (tree_name, extra) in variants.items():
                    measured, counts = run_tree(
                        trees[tree_name], stores[tree_name], server.url, work, **extra
                    )
                    runs[name].append(measured)
                    print(
                        f"round {i + 1}: {name} {measured.seconds:.2f} s, "
                        f"{measured.cpu_seconds:.2f} CPU s, {measured.peak_mb:.0f} MB, "
                        f"outcomes {counts.get('outcomes')}",
                        flush=True,
                    )
                print(f"round {i + 1}: floor {floor.seconds:.2f} s, {floor.cpu_seconds:.2f} CPU s")
    n = args.payouts
    floor_cpu = median([m.cpu_seconds for m in runs["floor"]])
    floor_rate = n / median([m.seconds for m in runs["floor"]])
    print(f"\n{n:,} payouts, {args.rounds} rounds, server {args.server}")
    print("| client | rate | x floor | CPU s / 1,000 | x floor CPU | peak MB | CPU s each round |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, measured in runs.items():
        cpu = median([m.cpu_seconds for m in measured])
        rate = n / median([m.seconds for m in measured])
        peak = median([m.peak_mb for m in measured])
        each = ", ".join(f"{m.cpu_seconds:.2f}" for m in measured)
        print(
            f"| {name} | {rate:,.0f}/s | {rate / floor_rate:.2f} | {cpu / n * 1000:.3f} | "
            f"{cpu / floor_cpu:.2f} | {peak:.0f} | {each} |"
        )


if __name__ == "__main__":
    main()
