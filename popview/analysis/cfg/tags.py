"""The cfg vocabulary: which tags mean what, legacy spellings, and their modern forms."""
from __future__ import annotations

from .model import COMPOSE_SLOTS, DERIVED_OPERATIONS, LEVELS

HEADER = ("ConfigFile.Version:", "ConfigFile.NumWindows:", "version", "number_of_windows")
CFG4D = ("cfg4d", "cfg4dlink", "cfg4dstatistic", "cfg4dparam")

# Tags old Paraver versions wrote and the current loader skips.
LEGACY = frozenset((
    "window_pos_to_disp", "window_pos_of_x_scale", "window_pos_of_y_scale", "window_number_of_row",
    "window_expanded", "window_click_options", "window_click_info", "window_analyzer_info",
    "window_analyzer_executed", "window_send_icon_enabled", "window_recv_icon_enabled", "window_scrollbar",
    "window_selected_objects", "window_custom_background_as_zero", "window_scale", "window_current_time",
    "Analyzer2D.ShowWindows:", "Analyzer2D.Expanded:", "Analyzer2D.TextMode:",
))

# Presentation-only window tags: kept verbatim so a written cfg looks the same in Paraver.
WINDOW_GUI = (
    "window_position_x", "window_position_y", "window_width", "window_height", "window_comm_lines_enabled",
    "window_flags_enabled", "window_noncolor_mode", "window_compute_y_max", "window_open", "window_pixel_size",
    "window_labels_to_draw", "window_object_axis_position", "window_synchronize", "window_custom_color_enabled",
    "window_custom_color_palette", "window_semantic_scale_min_at_zero", "window_intracomms_enabled",
    "window_intercomms_enabled", "window_punctual_window",
)

FILTER_FLAGS = {
    "window_logical_filtered": "logical",
    "window_physical_filtered": "physical",
    "window_comm_fromto": "fromto_and",
    "window_comm_tagsize": "tagsize_and",
    "window_comm_typeval": "typeval_and",
}

WINDOW_SCALARS = {
    "window_units": ("units", "text"),
    "window_begin_time_relative": ("begin_relative", "number"),
    "window_begin_time": ("begin_time", "number"),
    "window_stop_time": ("end_time", "number"),
    "window_end_time": ("end_time", "number"),
    "window_maximum_y": ("maximum_y", "number"),
    "window_minimum_y": ("minimum_y", "number"),
    "window_color_mode": ("color_mode", "text"),
    "window_gradient_function": ("gradient_function", "text"),
    "window_drawmode": ("drawmode", "drawmode"),
    "window_drawmode_rows": ("drawmode_rows", "drawmode"),
}

_DRAWMODES = ("draw_last", "draw_maximum", "draw_minnotzero", "draw_random", "draw_randnotzero",
              "draw_average", "draw_averagenotzero", "draw_mode")


def drawmode_name(value: str) -> str:
    """Old cfgs write draw modes as codes 0-7; new ones write the names."""
    if value.isdigit() and int(value) < len(_DRAWMODES):
        return _DRAWMODES[int(value)]
    return value


LEGACY_FUNCTION_NAMES = {"Adding Sign": "AddingSign"}


def modern_name(function: str) -> str:
    return LEGACY_FUNCTION_NAMES.get(function, function)


def compose_slot(key: str) -> str | None:
    """The compose slot a key names: old `compose1/2` are the top composes, plain levels their compose."""
    if key in COMPOSE_SLOTS:
        return key
    if key in ("compose1", "compose2"):
        return "top" + key
    if key == "ptask":
        key = "appl"
    if key in LEVELS:
        return f"compose_{key}"
    return None


__all__ = ["DERIVED_OPERATIONS"]
