"""docs/configuration.md is the settings model, rendered: the file and the model never drift."""

from __future__ import annotations

from recon.settings import FILE_ONLY_FIELDS, Settings, env_name
from recon.settings_doc import DOC, default_text, render, variable_text


def test_the_configuration_guide_is_the_settings_model_rendered() -> None:
    """A setting added, removed or re-described without `python -m recon.settings_doc` fails."""
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/configuration.md differs from recon/settings.py: run "
        ".venv/bin/python -m recon.settings_doc"
    )


def test_every_setting_has_a_meaning_and_a_row() -> None:
    """A setting without a meaning would render an empty cell: settings_help.py must say it."""
    from recon.settings_help import MEANINGS

    text = render()
    for name in Settings.model_fields:
        assert MEANINGS.get(name, "").strip(), f"{name} has no meaning"
        assert f"| {variable_text(name)} |" in text


def test_a_table_of_the_file_is_named_as_written_there() -> None:
    """``[accounts.NAME]`` has no variable: the table says how the file writes it."""
    assert {"accounts"} == FILE_ONLY_FIELDS
    assert variable_text("accounts") == "`[accounts.NAME]` (file only)"
    assert variable_text("mail_to") == f"`{env_name('mail_to')}`"
    assert "[accounts.fjord]" in render()


def test_defaults_are_shown_as_an_operator_writes_them() -> None:
    """Octal modes, durations with units, lists comma-separated, and none when unset."""
    assert default_text("report_mode") == "`600`"
    assert default_text("max_run_age") == "`26h`"
    assert default_text("delay_grace") == "`1h`"
    assert default_text("watch_schedule") == "`1,2,3,4,5,6,7,12,18,24,30,45,60,75,90`"
    assert default_text("smtp_host") == "none"
    assert default_text("mail_to") == "none"
    assert default_text("connect_timeout") == "`10`"


def test_every_meaning_is_written_in_one_place() -> None:
    """settings_help.py has exactly the model's fields: a new setting gets its meaning there."""
    from recon.settings_help import MEANINGS

    assert set(MEANINGS) == set(Settings.model_fields)
