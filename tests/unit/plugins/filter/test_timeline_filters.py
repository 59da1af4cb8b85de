# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.cluster.plugins.filter.timeline import FilterModule


def test_filters_are_exposed_and_errors_are_filter_errors():
    filters = FilterModule().filters()
    assert filters["state_range"](["a", "b", "c"], "", "b") == ["a", "b"]
    with pytest.raises(AnsibleFilterError, match="gpuops_until_state"):
        filters["state_range"](["a", "b"], "", "z")
    assert filters["gpu_timeline"](None)["nodes"] == []
