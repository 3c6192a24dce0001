"""A file's recorded samples per question against the samples it holds, wherever the claim is written."""

from __future__ import annotations

import pytest

from protoqa_core.io.sample_claims import SAMPLE_COUNT_KEYS, SampleClaimError, check_counted_samples


@pytest.mark.parametrize("key", SAMPLE_COUNT_KEYS)
def test_a_claim_under_any_name_is_checked_at_the_top_and_in_the_sampling(key):
    check_counted_samples({key: 300}, 300, "a.json")
    check_counted_samples({"sampling": {key: "300.0"}}, 300, "a.json")
    check_counted_samples({"sampling": f"temperature:0.69|{key}:300"}, 300, "a.json")
    with pytest.raises(SampleClaimError, match=rf"a.json records 30 samples per question \({key}\)"):
        check_counted_samples({key: 30}, 300, "a.json")
    with pytest.raises(SampleClaimError, match=rf"\(sampling {key}\), but its questions carry at most 300"):
        check_counted_samples({"sampling": f"{key}:30"}, 300, "a.json")


def test_no_claim_or_no_samples_checks_nothing():
    for settings in (None, {}, {"num_samples": None}, {"sampling": "samples:None|top_p:0.9"}, "not a block"):
        check_counted_samples(settings, 300, "a.json")
    check_counted_samples({"num_samples": 30}, 0, "a.json")


@pytest.mark.parametrize("value", [True, "many", float("nan"), [300], "inf"])
def test_a_claim_that_is_no_finite_number_is_an_error_naming_it(value):
    with pytest.raises(SampleClaimError, match="a.json records num_samples as .*, which is not a finite number"):
        check_counted_samples({"num_samples": value}, 300, "a.json")
