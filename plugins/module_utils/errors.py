# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""The collection's error type, on its own so that pure helpers (and the filter plugins that use them) do not
import the kubernetes client through common.py: a filter's first use in a task's worker process paid 0.4 s for it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class GpuopsError(Exception):
    """A failure the user can fix: names the parameter (when one is at fault)."""

    def __init__(self, msg, param=None, **details):
        super(GpuopsError, self).__init__(msg)
        self.param = param
        self.details = details

    def __str__(self):
        msg = super(GpuopsError, self).__str__()
        if self.param and not msg.startswith(self.param):
            return "{0}: {1}".format(self.param, msg)
        return msg
