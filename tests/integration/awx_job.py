# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""A job run as AWX / Automation Controller runs one: through ansible-runner (AWX's engine), in a private data
directory laid out as AWX lays it out - the project checked out (awx/project/: playbooks that import the
collection's), the inventory of the project's inventory source, the survey's answers as extra vars, the bearer-token credential's environment with
the CA written to a file, no kubeconfig - and the job events and artifacts read back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, ".build")


class Job(object):
    def __init__(self, runner, private_data_dir):
        self.runner = runner
        self.dir = private_data_dir
        self.events = list(runner.events)

    @property
    def ok(self):
        return self.runner.status == "successful" and self.runner.rc == 0

    def task_names(self, event="playbook_on_task_start"):
        return [e["event_data"].get("task", "") for e in self.events if e.get("event") == event]

    def artifacts(self):
        """The set_stats data of the job: what AWX shows as the job's artifacts."""
        stats = [e for e in self.events if e.get("event") == "playbook_on_stats"]
        return (stats[-1]["event_data"].get("artifact_data") or {}) if stats else {}

    def everything_shown(self):
        """What the job shows and keeps as its output (stdout, stderr, every job event, status, facts), as one text.
        Not ansible-runner's ``command`` file (mode 0600): the runner's record of the command and the environment it
        was given, which holds the credential's variables by design."""
        chunks = []
        for base, _dirs, files in os.walk(os.path.join(self.dir, "artifacts")):
            for name in files:
                if name == "command" and os.path.dirname(base) == os.path.join(self.dir, "artifacts"):
                    continue
                with open(os.path.join(base, name), "rb") as f:
                    chunks.append(f.read().decode("utf-8", "replace"))
        return "\n".join(chunks)

    def failures(self):
        """'task: msg' of each failed task not ignored (a rescued one too): what a -vvvv tail leaves out."""
        lines = []
        for event in self.events:
            data = event.get("event_data") or {}
            if event.get("event") == "runner_on_failed" and not data.get("ignore_errors"):
                res = data.get("res") or {}
                lines.append("{0}: {1}".format(data.get("task"), str(res.get("msg") or res)[:1500]))
        return lines

    def tail(self):
        """The failed tasks' messages, then the end of the output."""
        stdout = self.runner.stdout.read() if self.runner.stdout else ""
        return "\n".join(["failed: " + line for line in self.failures()] + [stdout[-4000:]])


def run_job(tmp_path, cluster, token, playbook, survey_answers=None, check=False, verbosity=0, ident="1"):
    """Run ``playbook`` of awx/project as an AWX job against ``cluster`` with the bearer token ``token`` (the job
    template's verbosity 0-4 is ansible-playbook's -v count)."""
    import ansible_runner

    pdd = os.path.join(str(tmp_path), "job-" + ident)
    shutil.copytree(os.path.join(ROOT, "awx", "project"), os.path.join(pdd, "project"))
    # The job's inventory, as AWX writes it from the project's inventory source (awx/controller.yml), group_vars
    # included: the same variables as the runs from the command line.
    shutil.copytree(os.path.join(ROOT, "inventories", "local"), os.path.join(pdd, "inventory"))
    os.makedirs(os.path.join(pdd, "env"))
    # The credential type "OpenShift or Kubernetes API Bearer Token" writes the CA to a file of the job and
    # injects these variables.
    ca = os.path.join(pdd, "env", "k8s_ca.crt")
    shutil.copy(cluster.ca_cert, ca)
    envvars = {
        "K8S_AUTH_HOST": cluster.server,
        "K8S_AUTH_API_KEY": token,
        "K8S_AUTH_VERIFY_SSL": "True",
        "K8S_AUTH_SSL_CA_CERT": ca,
        # The execution environment has the collection and ansible-core installed; here, this checkout's.
        "ANSIBLE_COLLECTIONS_PATH": BUILD,
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    }
    with open(os.path.join(pdd, "env", "extravars"), "w") as f:
        yaml.safe_dump(survey_answers or {}, f)
    runner = ansible_runner.run(
        private_data_dir=pdd,
        playbook=playbook,
        envvars=envvars,
        cmdline="--check" if check else None,
        ident=ident,
        verbosity=verbosity or None,
        quiet=True,
    )
    return Job(runner, pdd)


def dump(job):
    return json.dumps([e.get("event_data", {}).get("task") for e in job.events])[:2000]
