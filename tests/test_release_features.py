"""The release columns rendered without `datasets` equal what `datasets` renders from them."""

from __future__ import annotations

from export.features import RELEASE_COLUMNS, ReleaseFeatures, hf_features, release_features
from export.parquet import portable_schema, portable_yaml_list


def test_renderings_equal_datasets_own():
    ours, theirs = release_features(), hf_features()
    assert ours.to_dict() == theirs.to_dict()
    assert ours._to_yaml_list() == theirs._to_yaml_list()
    assert ours.arrow_schema.equals(theirs.arrow_schema, check_metadata=True)
    assert portable_schema(ours).equals(portable_schema(theirs), check_metadata=True)
    assert portable_yaml_list(ours) == portable_yaml_list(theirs)


def test_a_record_column_and_nested_lists_render_alike():
    columns = {"meta": {"a": "int32", "b": ["string"]}, "grid": [["bool"]], "pics": [{"image": "image"}],
               "deep": [[{"x": "string"}]]}
    ours, theirs = ReleaseFeatures(columns), hf_features(columns)
    assert ours.to_dict() == theirs.to_dict()
    assert ours._to_yaml_list() == theirs._to_yaml_list()
    assert ours.arrow_schema.equals(theirs.arrow_schema, check_metadata=True)
    assert set(RELEASE_COLUMNS) == set(hf_features())
