"""The math task's error classes; on ties the earlier class wins (`Task.dominant_class`)."""

TAXONOMY = {
    "no_answer": "the completion never states a final answer",
    "truncated": "the completion stops mid-way (length limit) before giving an answer",
    "format_error": "the final answer is right but not in the form the reward expects (e.g. no \\boxed{})",
    "arithmetic_slip": "a written calculation is wrong (e.g. 7*8=54), which throws the answer off",
    "partial_answer": "some parts of a multi-part answer are right, others are wrong or missing",
    "wrong_method": "the attempt reaches none of the reference solution's key intermediate results: "
                    "a wrong approach or a missing idea",
    "wrong_final_answer": "the attempt follows the reference part of the way, then ends with a wrong answer",
}
