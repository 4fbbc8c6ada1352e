"""One provider export file into the store: read through the mapping, kept whole or not at all.

:func:`import_export` is what ``recon import provider-export`` (a file downloaded by hand) and a
pulled artifact share: the bytes are read through the ``[export]`` mapping
(:func:`recon.ingest.provider_export.read_export`); a file shaped unlike the mapping, or with a
row that cannot be read, is refused with every problem's line and reason and nothing is stored;
otherwise the file, its sha256 and its rows are kept (:func:`recon.store.export_rows.store_export`).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from sqlalchemy import Connection, Engine

from recon.export_settings import ExportMapping
from recon.ingest.provider_export import read_export
from recon.store.export_rows import ExportSource, StoredExport, store_export


def import_export(
    bind: Engine | Connection,
    data: bytes,
    mapping: ExportMapping,
    *,
    account: str,
    settled_from: datetime,
    settled_to: datetime,
    source: ExportSource,
    name: str,
    row_cap: int,
) -> StoredExport:
    """Read ``data`` (an export file of ``account`` for the settlement window
    [``settled_from``, ``settled_to``)) through ``mapping`` and store it; ``name`` names it in
    messages and in the store. ``InputError`` (nothing stored) when it cannot be read whole."""
    export = read_export(data, mapping, source=name)
    export.refuse_unreadable()
    return store_export(
        bind,
        account=account,
        settled_from=settled_from,
        settled_to=settled_to,
        data_sha256=hashlib.sha256(data).hexdigest(),
        headers=export.headers,
        rows=export.rows,
        source=source,
        name=name,
        row_cap=row_cap,
    )
