"""The code task's error classes, and which wins when attempts disagree."""

TAXONOMY = {
    "no_code": "the completion contains no code",
    "syntax_error": "the code does not parse",
    "missing_function": "the function the tests call is not defined",
    "wrong_signature": "the function is defined with parameters the tests do not call it with",
    "definition_error": "the code fails while being defined (a top-level statement or an import)",
    "early_exit": "the program exits before the tests finish (exit(), sys.exit, os._exit, a signal)",
    "runtime_error": "the function raises an exception on a test input",
    "wrong_answer": "the function returns a wrong value on a test",
    "timeout": "the code does not finish in time (an infinite loop or an algorithm too slow)",
    "resource_limit": "the code exceeds the memory, output or process limits",
    "other": "a failure of another kind (or an attempt that passed)",
}
# When attempts disagree, the most frequent class wins; ties go to the earliest class here (the one
# that blocks the others: code that does not parse cannot reach a wrong answer).
PRIORITY = ["no_code", "syntax_error", "missing_function", "wrong_signature", "definition_error",
             "early_exit", "timeout", "resource_limit", "runtime_error", "wrong_answer", "other"]
