"""The code task's error classes, and which wins when attempts disagree."""

# When attempts disagree, the most frequent class wins; ties go to the earlier class here (`Task.dominant_class`, the
# one rule the analyst node's `error_class` and `CodeTask.analyse` share): the class that blocks the others. Code
# that does not parse cannot reach a wrong answer, and a program that exits, hangs or hits a limit ends before the
# exceptions and wrong values of later tests are seen.
TAXONOMY = {
    "no_code": "the completion contains no code",
    "syntax_error": "the code does not parse",
    "missing_function": "the function the tests call is not defined",
    "wrong_signature": "the function is defined with parameters the tests do not call it with",
    "definition_error": "the code fails while being defined (a top-level statement or an import)",
    "early_exit": "the program exits before the tests finish (exit(), sys.exit, os._exit, a signal)",
    "timeout": "the code does not finish in time (an infinite loop or an algorithm too slow)",
    "resource_limit": "the code exceeds the memory, output or process limits",
    "runtime_error": "the function raises an exception on a test input",
    "wrong_answer": "the function returns a wrong value on a test",
    "other": "a failure of another kind (or an attempt that passed)",
}
