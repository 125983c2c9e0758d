"""Math text, shared by the math task and the leakage checker: LaTeX and unicode math made ASCII (`ascii`), short
expressions evaluated exactly (`value`), an answer's written forms read (`forms`: units, currency, separators,
parts, hedges), answers of several measures (`measures`: `5 ft 3 in`, `4 cm by 6 cm`), answers analysed once
(`answer`), sympy's cost screened and math-verify bounded (`cost`, `verify`), and the words and steps of a worked
solution (`steps`)."""
