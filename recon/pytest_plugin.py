"""recon's pytest plugin (the ``pytest11`` entry point): the ``payout_sandbox`` fixture.

Any project that installed recon gets it, no conftest needed: a fresh provider sandbox served over
real HTTP on loopback for the test, with ``.url``, ``.public_key``, ``.secret``, ``.merchant_id``,
``.advance(seconds)`` and ``.add_account(name)`` for a second merchant (docs/sandbox.md, "In your
own tests").

pytest loads this module in every run of every project that installed recon, recon's own
included: it imports nothing but pytest until a test asks for the fixture.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from recon.sandbox.loopback import LoopbackSandbox


@pytest.fixture
def payout_sandbox() -> Iterator[LoopbackSandbox]:
    """The payout provider's sandbox on ``127.0.0.1`` and a free port, for this test only."""
    from recon.sandbox.loopback import loopback_sandbox

    with loopback_sandbox() as sandbox:
        yield sandbox
