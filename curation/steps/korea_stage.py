"""Korea-specific tagging as a recorded stage right after items enter the store (import and
extraction), so the Korea review queue fills without a separate command. Each tagged item gets
its own revision (stage `tag-korea`, author `<writer>/tag-korea`); untagged items are untouched."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from curation.core.item import Item
from curation.core.revise import StageReport, revise
from curation.core.store import Store, StoredItem
from curation.steps.korea import KoreaLexicon, tag_korea

STAGE = "tag-korea"


def tag_new_items(store: Store, written: Sequence[Item], item_ids: Sequence[str], author: str,
                  lexicon: KoreaLexicon | None = None, *, created: Collection[str] = ()) -> StageReport:
    """Tag the items of `written` whose ids are in `item_ids` (just stored as they are in memory).
    Those in `created` are at revision 1; the other ones the lexicon changes are read back for
    their revision numbers. Either way the write is a compare-and-swap on that revision."""
    lexicon = lexicon or KoreaLexicon()
    entered, new = set(item_ids), set(created)
    changing = [item for item in written if item.id in entered and tag_korea(item, lexicon) != item]
    stored = [StoredItem(item, 1, "", "") for item in changing if item.id in new]
    read_back = [item.id for item in changing if item.id not in new]
    stored += list(store.get_many(read_back).values()) if read_back else []
    return revise(store, stored, lambda item: (tag_korea(item, lexicon), "korea lexicon (on entry)"),
                  stage=STAGE, author=f"{author}/{STAGE}")


def differs_only_by_tagging(store: Store, incoming: Sequence[Item], item_ids: Sequence[str],
                            lexicon: KoreaLexicon | None = None) -> list[str]:
    """Of `item_ids` (stored with other content than `incoming`), those whose stored version is
    the incoming one plus this stage's tags: re-importing the same file leaves them unchanged."""
    lexicon = lexicon or KoreaLexicon()
    wanted = set(item_ids)
    stored = store.get_many(list(wanted))
    return [item.id for item in incoming
            if item.id in wanted and item.id in stored and stored[item.id].item == tag_korea(item, lexicon)]
