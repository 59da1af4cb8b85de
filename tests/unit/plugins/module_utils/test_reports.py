# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.cluster.plugins.module_utils import reports
from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError
from ansible_collections.gpuops.cluster.plugins.module_utils.reports import check_report_path, write_atomic


def test_a_report_in_a_missing_folder_is_written_whole(tmp_path):
    path = str(tmp_path / "reports" / "run" / "timeline.json")
    assert check_report_path(path, "report_json") == path
    assert write_atomic(path, "{}\n") == path
    assert open(path).read() == "{}\n"
    assert os.listdir(os.path.dirname(path)) == ["timeline.json"]  # no .tmp left
    write_atomic(path, "[]\n")
    assert open(path).read() == "[]\n"


def test_unwritable_paths_name_the_option(tmp_path, monkeypatch):
    assert check_report_path(None, "report_json") is None
    with pytest.raises(GpuopsError, match=r"^report_json: .* is a directory; give a file name"):
        check_report_path(str(tmp_path), "report_json")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(GpuopsError, match=r"^report_junit: .*/file is not a folder"):
        check_report_path(str(blocker / "sub" / "r.xml"), "report_junit")
    # CI runs as root, who writes anywhere: the permission answer is the one a normal user would get.
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(reports.os, "access", lambda p, mode: False if p == str(locked) else real_access(p, mode))
    with pytest.raises(GpuopsError, match=r"^report_json: the folder .*/locked is not writable"):
        check_report_path(str(locked / "new" / "r.json"), "report_json")
