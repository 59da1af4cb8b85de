# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.cluster contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which nodes a gpuops.cluster module works on: one pair of options, one meaning."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  node_selector:
    description:
      - Labels every selected node carries (label key to value; an empty value matches a label set to "").
      - Also accepted as a string C(key=value,key2=value2).
      - When empty, the GPU nodes are selected - the nodes on which Node Feature Discovery found an
        NVIDIA PCI device, labelled C(feature.node.kubernetes.io/pci-10de.present),
        C(pci-0302_10de.present) or C(pci-0300_10de.present) C(=true), whichever form the NFD
        configuration produces.
    type: dict
    default: {}
  node_names:
    description:
      - Restrict the selection to these node names. A name that is not among the selected nodes is an error.
    type: list
    elements: str
"""
