# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Report files the modules write (validation reports, the timeline): whole or not at all."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpuops.cluster.plugins.module_utils.errors import GpuopsError


def write_atomic(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename, making the directory when missing.

    A reader (CI collecting artifacts, a person) never sees half a report; the directory is made here so that
    a playbook needs no task of its own for it (one module process less per report).
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory, exist_ok=True)  # another run may make it at the same time
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        handle.write(text)
    os.rename(tmp, path)
    return path


def check_report_path(path, param):
    """The report file can be written (its folder, or the nearest folder that exists, is writable): the path, or None."""
    if not path:
        return None
    path = os.path.abspath(os.path.expanduser(to_text(path)))
    if os.path.isdir(path):
        raise GpuopsError(
            "{0} is a directory; give a file name such as {1}".format(path, os.path.join(path, "report.json")),
            param=param,
        )
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise GpuopsError(
            "{0} exists and is not writable; fix its permissions or choose another path".format(path), param=param
        )
    folder = os.path.dirname(path)
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise GpuopsError("{0} is not a folder; choose another path".format(folder), param=param)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise GpuopsError(
            "the folder {0} is not writable by this user; choose another path".format(folder), param=param
        )
    return path
