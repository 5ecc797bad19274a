import json

import pytest

from curation.core.item import ItemValidationError, item_json_schema, parse_item

from .helpers import make_record


def test_valid_item_round_trips_through_its_record():
    item = parse_item(make_record("a-1", answer=2))
    assert parse_item(item.to_record()) == item
    assert item.multimodal is False


@pytest.mark.parametrize(
    ("change", "path", "reason"),
    [
        ({"id": "has space"}, "id", "pattern"),
        ({"stem": "   "}, "stem", "the stem is empty"),
        ({"answer": 5}, "(item)", "answer 5 is not an option number 1..4"),
        ({"answer": {"format": "choice", "options": [5]}}, "(item)", "answer 5 is not an option number 1..4"),
        ({"answer": 0}, "answer.choice.options", "option numbers start at 1"),
        ({"answer": [2, 2]}, "answer.choice.options", "answer lists an option twice"),
        ({"answer": {"format": "numeric"}}, "answer.numeric.value", "Field required"),
        ({"answer": {"format": "essay", "text": "x"}}, "answer", "does not match any of the expected tags"),
        ({"status": "done"}, "status", "Input should be"),
        ({"options": [{"text": "가"}, {"text": " "}]}, "options.2", "an option needs text or an image"),
        ({"source": {}}, "source.exam", "Field required"),
        ({"surprise": 1}, "surprise", "Extra inputs are not permitted"),
        ({"images": [{"blob": "../../etc/passwd"}]}, "images.1.blob", "pattern"),
        ({"source": {"exam": "x", "bbox": [10, 10, 5, 20]}}, "source.bbox", "x1 >= x0"),
        ({"original_option_order": [1, 1, 2, 3]}, "(item)", "permutation"),
    ],
)
def test_invalid_items_are_refused_with_field_path_and_reason(change, path, reason):
    record = make_record("a-1", answer=1) | change
    with pytest.raises(ItemValidationError) as caught:
        parse_item(record)
    problems = caught.value.problems
    assert any(problem.startswith(f"{path}:") and reason in problem for problem in problems), problems


def test_multi_answer_and_image_options_are_valid():
    record = make_record("a-2", answer=[1, 3])
    record["options"][1] = {"text": "", "image": {"blob": "a" * 64 + ".png", "kind": "raster"}}
    item = parse_item(record)
    assert item.answer_list() == [1, 3]
    assert item.multimodal is True
    assert item.blob_refs() == ["a" * 64 + ".png"]


def test_json_schema_describes_the_item():
    schema = item_json_schema()
    assert schema["title"] == "Item"
    assert {"id", "source", "stem", "options", "answer", "status", "schema_version"} <= set(schema["properties"])
    json.dumps(schema)  # serialisable
