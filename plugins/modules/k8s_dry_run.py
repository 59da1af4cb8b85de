#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: k8s_dry_run
short_description: Ask the API server what admission makes of a create, without persisting anything
version_added: 0.1.0
author:
  - gpuops.cluster maintainers (!UNKNOWN)
description:
  - Sends each definition as a create with C(dryRun=All). Defaulting and every admission plugin run (LimitRanger
    fills default requests and limits, ResourceQuota refuses what exceeds a quota, Pod Security checks the pod),
    and nothing is stored.
  - A refusal is a result (RV(results[].allowed) false, with the HTTP status and the server's message), not a task
    failure, so a playbook can assert that a request is refused. The task never reports a change.
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The requests are server-side dry runs either way; nothing is persisted.
  diff_mode:
    support: none
  platform:
    platforms: all
options:
  definitions:
    description: The objects to create in a dry run (C(metadata.name) or C(metadata.generateName) each).
    type: list
    elements: dict
    required: true
  namespace:
    description: Namespace for the namespaced objects whose manifest has none.
    type: str
requirements:
  - python >= 3.9
  - kubernetes >= 24.2.0
"""

EXAMPLES = r"""
- name: Would a pod asking for 3 GPUs in team-a be admitted?
  gpuops.cluster.k8s_dry_run:
    namespace: team-a
    definitions:
      - apiVersion: v1
        kind: Pod
        metadata:
          generateName: quota-probe-
        spec:
          containers:
            - name: probe
              image: registry.k8s.io/pause:3.10
              resources:
                limits:
                  nvidia.com/gpu: 3
  register: probe
"""

RETURN = r"""
results:
  description: One entry per definition, in order.
  returned: always
  type: list
  elements: dict
  contains:
    kind:
      description: Its kind.
      type: str
    namespace:
      description: Its namespace (null for cluster-scoped objects).
      type: str
    name:
      description: Its name (or generateName).
      type: str
    allowed:
      description: Whether the server would create it.
      type: bool
    status:
      description: HTTP status of the answer (201, or 403 for a quota refusal, 422 for an invalid object ...).
      type: int
    reason:
      description: The Status reason of a refusal (C(Forbidden), C(Invalid) ...).
      type: str
    message:
      description: The server's message of a refusal.
      type: str
    object:
      description: The object as it would be stored (defaults and admission mutations applied); null when refused.
      type: dict
"""

from ansible_collections.gpuops.cluster.plugins.module_utils.common import new_module, run_module
from ansible_collections.gpuops.cluster.plugins.module_utils.dry_run import argument_spec, run


def main():
    module = new_module(argument_spec(), supports_check_mode=True)
    run_module(module, run)


if __name__ == "__main__":
    main()
