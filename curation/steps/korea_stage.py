"""Korea-specific tagging as a recorded stage right after items enter the store (import and
extraction), so the Korea review queue fills without a separate command. Each tagged item gets
its own revision (stage `tag-korea`, author `<writer>/tag-korea`); untagged items are untouched."""

from __future__ import annotations

from collections.abc import Sequence

from curation.item import Item
from curation.revise import StageReport, revise
from curation.steps.korea import KoreaLexicon, tag_korea
from curation.store import Store

STAGE = "tag-korea"


def tag_new_items(store: Store, written: Sequence[Item], item_ids: Sequence[str], author: str,
                  lexicon: KoreaLexicon | None = None) -> StageReport:
    """Tag the items of `written` whose ids are in `item_ids` (just stored as they are in memory):
    only those the lexicon changes are read back, for their revision numbers."""
    lexicon = lexicon or KoreaLexicon()
    entered = set(item_ids)
    changing = [item.id for item in written if item.id in entered and tag_korea(item, lexicon) != item]
    stored = list(store.get_many(changing).values()) if changing else []
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
