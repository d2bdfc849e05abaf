"""Scheduler classes, one module per family, and the registry the profiles name them by."""

from .base import MS, NICE_0, Policy, RunQueue, ilog2
from .cfs import CfsPolicy
from .eevdf import EevdfPolicy
from .globalq import EdfPolicy, GoodnessPolicy
from .o1 import O1Policy
from .rsdl import RsdlPolicy

REGISTRY = {cls.family: cls for cls in (GoodnessPolicy, O1Policy, CfsPolicy, RsdlPolicy,
                                        EevdfPolicy, EdfPolicy)}


def make_policy(family, kernel, tun, ncpus):
    """A policy of ``family`` (a REGISTRY key) configured by the profile's tunables."""
    return REGISTRY[family](kernel, tun, ncpus)


__all__ = ["MS", "NICE_0", "Policy", "RunQueue", "ilog2", "REGISTRY", "make_policy",
           "CfsPolicy", "EevdfPolicy", "EdfPolicy", "GoodnessPolicy", "O1Policy", "RsdlPolicy"]
