"""Agreement statistics against published worked examples (not against our own output)."""

import math

import pytest

from annotator.review.agreement import icc, krippendorff_alpha

nan = math.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", reliability data with
# missing values: 4 observers × 12 units. Published: nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges (here judges × targets).
# Published: ICC(2,1) = .29, ICC(3,1) = .71.
SHROUT_FLEISS = [
    [9, 6, 8, 7, 10, 6],
    [2, 1, 4, 1, 5, 2],
    [5, 3, 6, 2, 6, 4],
    [8, 2, 8, 6, 9, 7],
]


@pytest.mark.parametrize(("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_alpha_matches_the_published_example(metric, published):
    assert krippendorff_alpha(KRIPPENDORFF_2011, metric) == pytest.approx(published, abs=5e-4)


@pytest.mark.parametrize(("kind", "published"), [("2,1", 0.29), ("3,1", 0.71)])
def test_icc_matches_shrout_and_fleiss(kind, published):
    assert icc(SHROUT_FLEISS, kind) == pytest.approx(published, abs=5e-3)


def test_icc_drops_units_not_rated_by_everyone():
    with_gap = [row + [nan if n == 0 else 3] for n, row in enumerate(SHROUT_FLEISS)]
    assert icc(with_gap) == pytest.approx(icc(SHROUT_FLEISS))


def test_no_variation_or_too_little_data_gives_nan_not_a_number_pretending():
    assert math.isnan(krippendorff_alpha([[3, 3, 3], [3, 3, 3]]))
    assert math.isnan(krippendorff_alpha([[1, nan], [nan, 2]]))  # no unit has two values
    assert math.isnan(icc([[1, 2], [nan, 3]]))


def test_perfect_agreement_is_one_and_bad_input_is_refused():
    assert krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 4]], "ordinal") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="2-D"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(ValueError, match="metric"):
        krippendorff_alpha(KRIPPENDORFF_2011, "ratio")  # type: ignore[arg-type]
