# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubernetes.core.plugins.action.k8s_info import ActionModule as K8sAction


class ActionModule(K8sAction):
    """kubernetes.core's action (kubeconfig files, vault and dicts resolved on the controller), then this module."""
