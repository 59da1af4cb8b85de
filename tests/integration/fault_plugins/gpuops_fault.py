# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""Test-only callback: holds ansible-playbook at the start of one chosen task, so that a test can inject a fault
(stop the API server, SIGKILL the run) at a known point in the middle of a state.

GPUOPS_FAULT_DIR   a directory; every task start is appended to its ``tasks`` file as a JSON line
                   (role, task name, action), so a test can say where a run was.
GPUOPS_FAULT_AT    a JSON list of ``<role>::<task name>``, in the order the run reaches them: at the first start of
                   the next of them, write ``held-<i>`` (its index) in the directory and wait until the test
                   writes ``release-<i>`` there (at most 120 s; then carry on and say so).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: gpuops_fault
type: aggregate
short_description: holds a run at one task for fault injection (tests only)
description: see the module docstring.
requirements: [enabled in ANSIBLE_CALLBACKS_ENABLED]
"""

HOLD_SECONDS = 120


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuops_fault"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.dir = os.environ.get("GPUOPS_FAULT_DIR")
        self.cuts = [cut.partition("::")[::2] for cut in json.loads(os.environ.get("GPUOPS_FAULT_AT") or "[]")]
        self.next = 0

    def _write(self, name, text):
        with open(os.path.join(self.dir, name), "a") as handle:
            handle.write(text)

    def v2_playbook_on_task_start(self, task, is_conditional):
        if not self.dir:
            return
        role = task._role.get_name() if task._role else ""  # pylint: disable=protected-access
        name = task.name or task.get_name()
        self._write("tasks", json.dumps({"role": role, "task": name, "action": task.action, "at": time.time()}) + "\n")
        if self.next >= len(self.cuts):
            return
        want_role, want_task = self.cuts[self.next]
        if not role.endswith(want_role) or name != want_task:
            return
        index, self.next = self.next, self.next + 1
        self._write("held-{0}".format(index), json.dumps({"role": role, "task": name, "pid": os.getpid()}))
        release = os.path.join(self.dir, "release-{0}".format(index))
        deadline = time.time() + HOLD_SECONDS
        while not os.path.exists(release) and time.time() < deadline:
            time.sleep(0.05)
        if not os.path.exists(release):
            self._display.warning("gpuops_fault: never released at {0}".format(name))
