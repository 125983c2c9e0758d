"""Leakage checker quality and speed on CHAMP (offline).

- Detection rate: CHAMP's human hints with the answer inserted in many forms (digits, zero padding,
  superscript and subscript digits, separators, digit by digit, words, boxed, scientific, decimals, LaTeX fractions,
  equivalent expressions, the solution's final step, a display block after six other statements...), per form.
- False-alarm rate: CHAMP's human-written hints as they are, minus those that contain the answer
  outright (a multi-digit answer as a standalone number, or a text answer quoted); and, a harder set,
  the intermediate steps of CHAMP's reference solutions (math-dense, full of the problem's numbers),
  minus those that contain the answer outright, checked by the answer detectors only.
- Speed: mean, 95th percentile and max ms per `check_leak` call (after one warm-up call).

Run: .venv/bin/python benchmarks/leakage.py [-v]   (-v lists every miss and false alarm)
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections import defaultdict

from mentor.data.champ import load_champ
from mentor.leakage import check_leak
from mentor.leakage.symbolic import problem_states_answer
from mentor.mathtext.answer import analyse_answer
from mentor.mathtext.ascii import compact
from mentor.tasks import get_task

UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
        "seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
SUPERSCRIPT, SUBSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"), str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
SIX_STATEMENTS = r"Each case ends in \boxed{\ldots}. " * 6  # six statements before the answer's (the 7th)
TEMPLATES = ["The answer is {x}.", "You should end up with {x}.", "Check that you get {x} at the end.",
             "{x} is the final answer.", "So the total equals {x}.", "The result: {x}.", "Keep {x} in mind."]


def words(n: int) -> str:
    """English words for an integer below a million (written independently of the checker's parser)."""
    if n < 0:
        return "minus " + words(-n)
    if n < 20:
        return UNITS[n]
    if n < 100:
        return TENS[n // 10] + ("-" + UNITS[n % 10] if n % 10 else "")
    if n < 1000:
        return UNITS[n // 100] + " hundred" + (" and " + words(n % 100) if n % 100 else "")
    return words(n // 1000) + " thousand" + (" " + words(n % 1000) if n % 1000 else "")


def latex(expr: str) -> str:
    r"""`2^(n-1)` -> `2^{n-1}`, `sqrt(3)` -> `\sqrt{3}`: the answer as a LaTeX writer would put it."""
    out = re.sub(r"sqrt\(([^()]*)\)", r"\\sqrt{\1}", expr)
    return re.sub(r"\^\(([^()]*)\)", r"^{\1}", out)


def equivalent(expr: str) -> str | None:
    """A different but equal form of a symbolic answer (sympy's expansion, in LaTeX), or None."""
    try:
        import sympy
        from sympy.parsing.sympy_parser import (
            convert_xor,
            implicit_multiplication_application,
            parse_expr,
            standard_transformations,
        )

        tr = standard_transformations + (implicit_multiplication_application, convert_xor)
        e = parse_expr(expr.replace("C(", "binomial("), transformations=tr)
        alt = sympy.expand(e) if sympy.expand(e) != e else sympy.factor(e)
        text = sympy.latex(alt)
        return text if alt != e and len(text) <= 60 else None
    except Exception:
        return None


def leaked_forms(answer: str, problem: str) -> dict[str, str]:
    """Form name -> the answer written in that form. An equivalent form that the problem itself states
    (`factor x^4+x^2+1`) is left out: restating the problem is not a leak."""
    ans, forms = analyse_answer(answer), {}
    if len(ans.values) == 1:
        v = ans.values[0]
        forms["boxed"] = f"\\boxed{{{answer}}}"
        if v.denominator == 1:
            n = int(v)
            forms.update(digits=str(n), words=words(n) if abs(n) < 10**6 else str(n))
            if n >= 0:
                forms["zero_padded"] = f"{n:05d}" if n < 10000 else f"0{n}"
                forms.update(superscript=str(n).translate(SUPERSCRIPT), subscript=str(n).translate(SUBSCRIPT))
            if 10 <= abs(n) < 10**12:
                forms["digit_by_digit"] = " ".join(str(abs(n)))
                forms["sum_expression"] = f"{n // 2 + 1}+{n - n // 2 - 1}"
            if abs(n) >= 1000:
                forms["separators"] = f"{n:,}"
                forms["thin_space"] = f"{n:,}".replace(",", " ")
            if abs(n) >= 100 and len(str(abs(n))) <= 15:
                digits = str(abs(n))
                mantissa = (digits[0] + "." + digits[1:]).rstrip("0").rstrip(".")
                forms["scientific"] = f"{'-' if n < 0 else ''}{mantissa} \\times 10^{{{len(digits) - 1}}}"
        else:
            forms.update(latex_frac=f"\\frac{{{v.numerator}}}{{{v.denominator}}}", slash=f"{v.numerator}/{v.denominator}",
                         decimal=f"{float(v):.4g}" if len(f"{float(v):.4g}") > 2 else str(float(v)),
                         percent=f"{float(v) * 100:.3g}%", doubled=f"\\frac{{{2 * v.numerator}}}{{{2 * v.denominator}}}")
    elif ans.values:
        forms.update(all_parts=answer, one_part=str(max(ans.values, key=abs)))
    elif ans.symbolic:
        forms.update(verbatim=answer, latex=f"${latex(answer)}$", boxed=f"\\boxed{{{latex(answer)}}}")
        alt = equivalent(answer)
        if alt and not problem_states_answer(problem, answer):
            forms["equivalent"] = f"${alt}$"
        if ans.approx is not None:
            forms["decimal"] = f"{ans.approx:.4f}"
    elif ans.phrase:
        forms.update(stated=answer, boxed=f"\\boxed{{\\text{{{answer}}}}}")
    return forms


def contains_answer(hint: str, row: dict) -> bool:
    """Whether a human hint or a solution step already holds the answer outright, by a rule simpler than the
    checker's: an answer value of two digits or more (or a fraction) as a standalone number, the written
    form of a non-numeric answer or of one of its aliases, or a quoted text answer. Such texts are left out
    of the false-alarm sets. Single-digit answers are never left out: they test the short-answer rule."""
    ans = analyse_answer(row["answer"])
    if any(re.search(rf"(?<![\d.]){re.escape(str(v))}(?![\d])", hint) for v in ans.values
           if abs(v) >= 10 or v.denominator != 1):
        return True
    for form in [row["answer"]] + row["answer_aliases"]:
        if not re.fullmatch(r"[-\d./ ]+", form) and len(compact(form)) >= 3 and compact(form) in compact(hint):
            return True
    return bool(ans.phrase) and ans.phrase in hint.lower()


def main(verbose: bool = False) -> None:
    rows = load_champ()
    check_leak("warm up", {"answer": "2^(n-1)"}, get_task("math"))
    times, found, misses, alarms = [], defaultdict(lambda: [0, 0]), [], []

    def timed(hint, ref, problem):
        t0 = time.perf_counter()
        v = check_leak(hint, ref, get_task("math"), problem=problem)
        times.append((time.perf_counter() - t0) * 1000)
        return v

    clean = flagged = steps_clean = steps_flagged = 0
    step_alarms = []
    for i, r in enumerate(rows):
        ref = {k: r[k] for k in ("answer", "answer_aliases", "solution")}
        for h in r["hints"]:
            if contains_answer(h, r):
                continue
            clean += 1
            v = timed(h, ref, r["problem"])
            if v.leaked:
                flagged += 1
                alarms.append((r["problem_id"], r["answer"], h, v.reason))
        for step in r["solution_steps"][:-1]:  # intermediate steps: math-dense text with the problem's numbers
            if contains_answer(step, r):
                continue
            steps_clean += 1
            v = timed(step, {k: r[k] for k in ("answer", "answer_aliases")}, r["problem"])
            if v.leaked:
                steps_flagged += 1
                step_alarms.append((r["problem_id"], r["answer"], step, v.reason))
        base = r["hints"][0] if r["hints"] else "Think about the structure of the problem."
        short = bool(analyse_answer(r["answer"]).short)
        forms = leaked_forms(r["answer"], r["problem"])
        forms_and_hints = {name: f"{base} {TEMPLATES[(i + j) % len(TEMPLATES)].format(x=x)}"
                           for j, (name, x) in enumerate(forms.items())}
        if len(r["solution_steps"]) > 1:
            forms_and_hints["final_step"] = f"{base} {r['solution_steps'][-1]}"
        forms_and_hints["7th_statement_display"] = f"{base} {SIX_STATEMENTS}The answer is\n$$\n{latex(r['answer'])}\n$$"
        for name, hint in forms_and_hints.items():
            v = timed(hint, ref, r["problem"])
            for key in (name, "ALL", "short answers (-9..9)" if short else "other answers"):
                found[key][0] += 1
                found[key][1] += v.leaked
            if not v.leaked:
                misses.append((r["problem_id"], r["answer"], name, hint))

    print(f"{'leaked form':<24}{'hints':>7}{'caught':>8}{'rate':>8}")
    for name, (n, k) in sorted(found.items(), key=lambda kv: (kv[0] in ("ALL",) or kv[0].endswith("answers"), kv[0])):
        print(f"{name:<24}{n:>7}{k:>8}{k / n:>8.1%}")
    print(f"\nclean human hints: {clean}, false alarms: {flagged} ({flagged / max(clean, 1):.1%})")
    print(f"intermediate solution steps (answer detectors only): {steps_clean}, flagged: {steps_flagged} "
          f"({steps_flagged / max(steps_clean, 1):.1%})")
    times.sort()
    print(f"check_leak: {len(times)} calls, mean {statistics.mean(times):.2f} ms, "
          f"p95 {times[int(0.95 * len(times))]:.2f} ms, max {times[-1]:.1f} ms")
    if verbose:
        print("\nFALSE ALARMS")
        for a in alarms:
            print(" ", a)
        print("\nFLAGGED INTERMEDIATE STEPS")
        for a in step_alarms:
            print(" ", a)
        print("\nMISSES")
        for m in misses:
            print(" ", m)


if __name__ == "__main__":
    main("-v" in sys.argv)
