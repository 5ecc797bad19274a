"""Item ids made from what a source file says of an item (exam, session, number …)."""

from __future__ import annotations

import re
import unicodedata

_ID_UNSAFE = re.compile(r"[^A-Za-z0-9가-힣._:\-]+")


def make_item_id(*parts: object) -> str:
    joined = "-".join(str(part).strip() for part in parts if part not in (None, ""))
    return _ID_UNSAFE.sub("_", unicodedata.normalize("NFC", joined)).strip("_")[:200]


def nfc(text: object) -> str:
    return unicodedata.normalize("NFC", str(text)).strip() if text is not None else ""
