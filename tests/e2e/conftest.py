"""Fixtures shared by the end-to-end tests."""

from tests.e2e.monitor_support import monitor

__all__ = ["monitor"]
