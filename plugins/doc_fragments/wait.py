# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How long a gpuops.cluster module waits (kubernetes.core's wait vocabulary)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  wait_timeout:
    description:
      - How long to wait, in seconds, before giving up with a message that names what was still missing.
      - When not set, the module's own default applies, sized for its work
        (C(machineset_clone) 900, C(driver_container_build) 1800, C(nfd_labels), C(gpu_validate) and
        C(k8s_ensure) 300).
    type: int
  wait_sleep:
    description:
      - Seconds between two looks at the cluster while waiting.
    type: int
    default: 5
"""
