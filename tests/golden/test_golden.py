"""The golden comparison: recorded nights replayed give the report packs committed beside them.

Each scenario under tests/golden/ is a cassette (recorded inputs: payouts files, notifications,
people's actions, changes to the store, the provider's answers, each run's as-of and clock) and the
packs its nights produced (CSVs, report.html, chart.png, the workbook's cell values, the email, the
exit). The test replays the cassette into a fresh SQLite store and compares every file, byte for
byte, after masking the few values a replay cannot pin (tests/golden/pack.py, ``MASKS``).

A change that alters a report on purpose rewrites the expected packs, and the diff is reviewed in
its commit:

    .venv/bin/python -m tests.golden.replay --update            # every scenario
    .venv/bin/python -m tests.golden.replay --update scenario   # one

``demo`` is ``make demo``'s two nights (recorded by tests/golden/record_demo.py); ``scenario`` is
22 nights against the sandbox (tests/golden/record_scenario.py; what each night holds is in
tests/golden/scenario/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.replay import GOLDEN, SCENARIOS, differences, expected_dir, replay


@pytest.mark.parametrize("name", SCENARIOS)
def test_replayed_nights_give_the_committed_packs(name: str, tmp_path: Path) -> None:
    """Every file of every night's pack equals the committed one, masks aside."""
    scenario = GOLDEN / name
    produced = replay(scenario, tmp_path)
    problems = differences(expected_dir(scenario), produced)
    if problems:
        pytest.fail(
            f"{name}: the replayed report packs differ from tests/golden/{name}/ (the first files "
            "below); if the change is intended, run `python -m tests.golden.replay --update` and "
            "review the diff\n\n" + "\n".join(problems),
            pytrace=False,
        )
