"""The systemd units as shipped: the nightly service runs `recon run` itself (the journal gets its
log), reads the env file, and is stopped at a deadline; the cron wrapper is cron's alone."""

from __future__ import annotations

from pathlib import Path

CRON = Path(__file__).resolve().parents[2] / "cron"


def directives(unit: str) -> dict[str, list[str]]:
    """Every active ``Key=value`` line of a unit file, values in order (comments skipped)."""
    found: dict[str, list[str]] = {}
    for line in (CRON / unit).read_text(encoding="utf-8").splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def test_the_nightly_service_runs_recon_itself_not_the_wrapper() -> None:
    """ExecStart is `recon run`, with the env file and a working directory; no wrapper, no flock."""
    unit = directives("recon-nightly.service")
    assert unit["ExecStart"] == ["/opt/recon/.venv/bin/recon run"]
    assert unit["EnvironmentFile"] == ["/etc/recon/recon.env"]
    assert unit["WorkingDirectory"] == ["/var/lib/recon"]
    assert unit["TimeoutStartSec"] == ["4h"]
    text = (CRON / "recon-nightly.service").read_text(encoding="utf-8")
    assert "recon-nightly.sh\n" not in text.replace("(recon-nightly.sh)", "")


def test_both_services_show_how_to_hand_secrets_over_as_credentials() -> None:
    """Commented LoadCredential= lines name the variables recon reads from the directory."""
    for unit in ("recon-nightly.service", "recon-callbacks.service"):
        text = (CRON / unit).read_text(encoding="utf-8")
        assert "#LoadCredential=RECON_" in text, unit


def test_the_nightly_service_may_write_the_documented_metrics_directory() -> None:
    """ProtectSystem=strict makes the file system read-only: the directory of the metrics file
    that recon.env.example and the guide name is a ReadWritePaths= of the unit."""
    unit = directives("recon-nightly.service")
    assert unit["ProtectSystem"] == ["strict"]
    example = (CRON / "recon.env.example").read_text(encoding="utf-8")
    (line,) = [x for x in example.splitlines() if x.lstrip("# ").startswith("RECON_METRICS_FILE=")]
    documented = Path(line.partition("=")[2].strip())
    guide = (CRON.parent / "docs" / "operations.md").read_text(encoding="utf-8")
    assert f"`{documented}`" in guide
    writable = [Path(p.lstrip("-")) for value in unit["ReadWritePaths"] for p in value.split()]
    assert documented.parent in writable
