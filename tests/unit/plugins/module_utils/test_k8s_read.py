# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.k8s_read import check_reads


def test_keys_default_to_the_kind_and_must_be_unique():
    reads = check_reads([{"kind": "Node"}, {"kind": "Node", "key": "gpu", "label_selectors": ["a=b"]}])
    assert [r["key"] for r in reads] == ["Node", "gpu"]
    with pytest.raises(GpuopsError, match=r"reads\[1\]\.key 'Node' is also the key of reads\[0\]"):
        check_reads([{"kind": "Node"}, {"kind": "Node"}])


@pytest.mark.parametrize(
    "reads, words",
    [
        ([], "must list at least one read"),
        ([{"kind": ""}], r"reads\[0\]\.kind is required"),
    ],
)
def test_bad_reads_name_the_option(reads, words):
    with pytest.raises(GpuopsError, match=words) as err:
        check_reads(reads)
    assert err.value.param == "reads"
