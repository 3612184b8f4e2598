"""Which quantity a question asks for, and whether an answer gives one of that kind."""

from __future__ import annotations

import pytest

from rag_system.grounding.quantities import other_quantity

TEMPERATURE = "What is the maximum operating temperature of the Atlas-7?"
PRESSURE = "What is the boiler pressure of the Atlas-7?"
PERCENTAGE = "What percentage of base salary is paid in the first three months of sick leave?"


@pytest.mark.parametrize("question, answer, expected", [
    (TEMPERATURE, "The brew boiler operates at a pressure of 9.2 bar during extraction [1].", "temperature"),
    (TEMPERATURE, "The PID controller keeps brew water at 93.5 degrees Celsius [1].", None),
    (TEMPERATURE, "It is 93.5 °C [1].", None),
    (TEMPERATURE, "It runs at 93.5C [1].", None),
    (TEMPERATURE, "The documents give no maximum [1].", None),  # no number: not a quantity of another kind
    (PRESSURE, "The brew boiler is kept at 9.2 bar [1].", None),
    (PRESSURE, "The brew water is kept at 93.5 degrees [1].", "pressure"),
    (PRESSURE, "It is 1.2 MPa [1].", None),
    (PERCENTAGE, "Sick pay is 100 percent of base salary [1].", None),
    (PERCENTAGE, "It is 80% [1].", None),
    (PERCENTAGE, "Employees receive 10 days of sick leave [1].", "percentage"),
    # a question whose ask has no units of its own is not judged
    ("How many days of bereavement leave does an employee get?", "Bereavement leave is 5 working days [1].", None),
    ("What is the purchase price of the acquisition?", "The price is 45 million [1].", None),
    # the citation marker is not a number of the answer
    (TEMPERATURE, "The manual gives the brew temperature [1].", None),
])
def test_other_quantity(question: str, answer: str, expected: str | None):
    assert other_quantity(question, answer) == expected
