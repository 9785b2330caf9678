"""Plain data of an experiment: definitions, state vocabulary, call paths.

No Qt and no h5py here: the model is what every other layer agrees on.
"""
from popview.model.definitions import Definitions, EventType, Location, Process, Region
from popview.model.states import STATE_CLASSES, StateClass, default_states

__all__ = [
    "Definitions", "EventType", "Location", "Process", "Region",
    "STATE_CLASSES", "StateClass", "default_states",
]
