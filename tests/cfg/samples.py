"""Small synthetic cfg texts, one construct or edge case each."""

DBL_MAX = ("179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171"
           "540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508"
           "455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858"
           "368.000000000000")
assert len(DBL_MAX.split(".")[0]) == 309

SINGLE = """#ParaverCFG
ConfigFile.Version: 3.4
ConfigFile.NumWindows: {count}
ConfigFile.BeginDescription
Instructions per thread
ConfigFile.EndDescription

################################################################################
< NEW DISPLAYING WINDOW Instructions >
################################################################################
window_name Instructions
window_type single
window_id 1
window_position_x 346
window_logical_filtered true
window_physical_filtered false
window_units Microseconds
window_maximum_y 18640295641.000000000000
window_level thread
window_scale_relative 1.000000000000
window_end_time_relative 1.000000000000
window_object appl {{ 1, {{ All }} }}
window_begin_time_relative 0.000000000000
window_drawmode 1
window_selected_functions {{ 14, {{ {{cpu, Active Thd}}, {{appl, Adding}}, {{task, Thread i}}, {{thread, Next Evt Val}}, {{node, Adding}}, {{system, Adding}}, {{workload, Adding}}, {{from_obj, All}}, {{to_obj, All}}, {{tag_msg, All}}, {{size_msg, All}}, {{bw_msg, All}}, {{evt_type, {evt_fn}}}, {{evt_value, All}} }} }}
window_compose_functions {{ 9, {{ {{compose_cpu, As Is}}, {{compose_appl, As Is}}, {{compose_task, As Is}}, {{compose_thread, As Is}}, {{compose_node, As Is}}, {{compose_system, As Is}}, {{compose_workload, As Is}}, {{topcompose1, As Is}}, {{topcompose2, As Is}} }} }}
window_semantic_module task Thread i {{ 1, {{ 1 3.000000000000 }} }}
window_semantic_module task Activity {{ 1, {{ 1 1.000000 }} }}
window_filter_module evt_type {evt_types}
window_filter_module evt_type_label 1 "PAPI_TOT_INS [Instr completed]"
"""


def single(evt_fn="=", evt_types="1 42000050", count=1):
    return SINGLE.format(evt_fn=evt_fn, evt_types=evt_types, count=count)


DERIVED = single(count=3) + """
################################################################################
< NEW DISPLAYING WINDOW Useful >
################################################################################
window_name Useful
window_type single
window_level thread
window_selected_functions { 14, { {cpu, Active Thd}, {appl, Adding}, {task, Adding}, {thread, Useful}, {node, Adding}, {system, Adding}, {workload, Adding}, {from_obj, All}, {to_obj, =}, {tag_msg, All}, {size_msg, All}, {bw_msg, All}, {evt_type, All}, {evt_value, All} } }
window_compose_functions { 9, { {compose_cpu, As Is}, {compose_appl, As Is}, {compose_task, As Is}, {compose_thread, As Is}, {compose_node, As Is}, {compose_system, As Is}, {compose_workload, As Is}, {topcompose1, As Is}, {topcompose2, As Is} } }

################################################################################
< NEW DISPLAYING WINDOW Useful Instructions >
################################################################################
window_name Useful Instructions
window_type composed
window_id 3
window_factors 1.000000000000 2.500000000000
window_operation {operation}
window_identifiers 1 2
window_level thread
window_selected_functions { 5, { {appl, Adding}, {task, Adding}, {node, Adding}, {system, Adding}, {workload, Adding}, } }
window_compose_functions { 9, { {compose_cpu, As Is}, {compose_appl, As Is}, {compose_task, As Is}, {compose_thread, As Is}, {compose_node, As Is}, {compose_system, As Is}, {compose_workload, As Is}, {topcompose1, As Is}, {topcompose2, As Is} } }
"""


def derived(operation="product"):
    return DERIVED.replace("{operation}", operation)


HISTOGRAM = """
< NEW ANALYZER2D >
Analyzer2D.Name: instructions
Analyzer2D.X: 366
Analyzer2D.ControlWindow: {control}
Analyzer2D.DataWindow: 3
Analyzer2D.Accumulator: Semantic
Analyzer2D.Statistic: Sum bursts
Analyzer2D.CalculateAll: True
Analyzer2D.Parameters: 4 -{dbl} {dbl} -{dbl} {dbl}
Analyzer2D.AnalysisLimits: Alltrace
Analyzer2D.ComputeYScale: False
Analyzer2D.Minimum: 0.000000000000
Analyzer2D.Maximum: 1000000000000000000.000000000000
Analyzer2D.Delta: 1000000000000000000.000000000000
{planes}"""

PLANES = """Analyzer2D.3D_ControlWindow: 2
Analyzer2D.3D_Minimum: 0.000000000000
Analyzer2D.3D_Maximum: 1.000000000000
Analyzer2D.3D_Delta: 1.000000000000
Analyzer2D.3D_FixedValue: 1.000000000000
Analyzer3D.ComputeYScale: True
"""


def with_histogram(control=3, planes=""):
    return derived() + HISTOGRAM.format(control=control, dbl=DBL_MAX, planes=planes)


OLD = """version 3.1
number_of_windows 1
begin_description
old style
end_description

################################################################################
< NEW DISPLAYING WINDOW User calls duration >
################################################################################
window_name User calls duration
window_type single
window_id 1
window_send_icon_enabled false
window_level ptask
window_selected_objects thread { 8, { 1, 1, 1, 1, 1, 1, 1, 1 } }
window_selected_functions { 13, { {cpu, Active Thd}, {appl, Adding}, {task, Adding}, {thread, Int. Between Evt}, {node, Adding}, {system, Adding}, {workload, Adding}, {from_obj, All}, {to_obj, All}, {tag_msg, All}, {size_msg, All}, {evt_type, =}, {evt_value, All} } }
window_semantic_module thread Avg Next Evt Val { 1, { 1 1000.000000 } }
window_compose_functions { 2, { {compose1, Select Range}, {compose2, As Is} } }
window_semantic_module compose1 Select Range { 2, { 1 9223372036854775808.000000, 1 0.000000 } }
window_semantic_module compose1 Mod { 1, { 1 9223372036854775808.000000 } }
window_drawmode 3
window_filter_module evt_type 1 60000020 
window_pos_to_disp 596
"""
