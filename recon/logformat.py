"""Log records as text (the default) or as one JSON object per line (``RECON_LOG_FORMAT=json``).

The JSON form is for log shippers (journald, Loki, Fluent Bit, Vector): every line is a complete
object with ``time`` (UTC, ISO 8601 with milliseconds), ``level``, ``logger`` and ``message``, plus
``exception`` when there is a traceback. Records pass through the scrubber before any formatter,
so the JSON carries no secret the text would not.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LogFormat = Literal["text", "json"]


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(record_fields(record, self), ensure_ascii=False)


def record_fields(record: logging.LogRecord, formatter: logging.Formatter) -> dict[str, Any]:
    """The JSON object of one record (the message formatted with its arguments)."""
    moment = datetime.fromtimestamp(record.created, UTC)
    fields: dict[str, Any] = {
        "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "level": record.levelname,
        "logger": record.name,
        "message": record.getMessage(),
    }
    if record.exc_info:
        fields["exception"] = record.exc_text or formatter.formatException(record.exc_info)
    return fields


def json_line(message: str, *, level: str = "INFO", logger: str = "recon") -> str:
    """A line of the JSON form for a message that is not a log record (a command's result)."""
    record = logging.LogRecord(logger, logging.getLevelName(level), "", 0, message, None, None)
    return json.dumps(record_fields(record, logging.Formatter()), ensure_ascii=False)


def use_log_format(kind: LogFormat) -> None:
    """Give every handler of the root logger the formatter of ``kind``."""
    formatter = JsonFormatter() if kind == "json" else logging.Formatter(TEXT_FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter)
