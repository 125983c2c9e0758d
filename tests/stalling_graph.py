"""A mentor graph with a sync node that stalls by the group's problem_id, for tests of timeouts and stuck calls.

`stuck-*` never returns (it first writes "stalling_graph: <id> is stuck" to stderr), `sleep-*` sleeps STALL_S seconds
(default 30), then writes "stalling_graph: <id> woke", `slow-*` sleeps SLOW_S (default 0.4); any other group passes
straight on to the shipped graph's nodes. Load it with `graph: <this file>:graph`."""

import os
import sys
import threading
import time

from langgraph.graph import START, StateGraph

from mentor.graphs.mentor.graph import route_after_check
from mentor.graphs.mentor.nodes import error_classifier, hint_composer, leakage_checker, root_cause_analyst
from mentor.graphs.mentor.state import MentorState

RELEASE = threading.Event()  # set by a test to let the `stuck-*` calls of this process return


def stall(state: MentorState) -> dict:
    problem = state["group"]["problem_id"]
    if problem.startswith("stuck"):
        print(f"stalling_graph: {problem} is stuck", file=sys.stderr, flush=True)  # the event a test waits for
        RELEASE.wait()
    elif problem.startswith("sleep"):
        time.sleep(float(os.environ.get("STALL_S", "30")))
        print(f"stalling_graph: {problem} woke", file=sys.stderr, flush=True)  # a process that waited for it says so
    elif problem.startswith("slow"):
        time.sleep(float(os.environ.get("SLOW_S", "0.4")))
    return {}


builder = StateGraph(MentorState)
for name, node in (("stall", stall), ("error_classifier", error_classifier), ("root_cause_analyst", root_cause_analyst),
                   ("hint_composer", hint_composer), ("leakage_checker", leakage_checker)):
    builder.add_node(name, node)
builder.add_edge(START, "stall")
for a, b in (("stall", "error_classifier"), ("error_classifier", "root_cause_analyst"),
             ("root_cause_analyst", "hint_composer"), ("hint_composer", "leakage_checker")):
    builder.add_edge(a, b)
builder.add_conditional_edges("leakage_checker", route_after_check)
graph = builder.compile(name="stalling")
