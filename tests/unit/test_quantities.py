"""Which quantity a question asks for, and whether an answer gives one of that kind."""

from __future__ import annotations

import pytest

from rag_system.grounding.quantities import asks_quantity, other_quantity, states_quantity

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


@pytest.mark.parametrize("question, asks", [
    ("How many streams may a peer open?", True),
    ("RFC 9000 tells a client to send another Initial packet when the probe timeout expires. How is that "
     "timer actually computed?", True),
    ("What formula gives the probe timeout?", True),
    ("How is the connection ID chosen?", False),
    ("Which frame carries the token?", False),
    # a number or value named by what it numbers
    ("What version number appears in the long header of QUIC version 2 packets?", True),
    ("What part number is the group head gasket?", True),
    ("Which error code points to a failed temperature sensor?", True),
    ("What numeric alert description does TLS assign to that alert?", True),
    ("What does the number in the header mean?", False),
    ("What is the version field used for?", False),
])
def test_which_questions_ask_for_a_number_or_formula(question: str, asks: bool):
    assert asks_quantity(question) is asks


@pytest.mark.parametrize("answer, states", [
    ("The PTO timer is computed based on the initial and handshake packet number spaces [3].", False),
    ("PTO = smoothed_rtt + max(4*rttvar, kGranularity) + max_ack_delay [2].", True),
    ("The period is smoothed_rtt plus max(rttvar, granularity) [2].", True),
    ("It is twice the smoothed RTT [2].", True),
    ("Each endpoint's peer may open streams [1].", False),  # "may" the verb, not the month
    ("The agreement was signed on May 3, 2024 [1].", True),
])
def test_a_formula_states_a_quantity(answer: str, states: bool):
    assert states_quantity(answer) is states


VERSION_2 = "What version number appears in the long header of QUIC version 2 packets?"


@pytest.mark.parametrize("answer, states", [
    ("All version 2 Long Header packet types are different. [3]", False),  # only the question's 2
    ("The version number appears in the long header of QUIC version 2 packets [3].", False),
    ("The Version field of long headers is 0x6b3343cf. [4]", True),
    ("Version 2 uses the value 0x6b3343cf. [4]", True),  # the question's number beside a new one
])
def test_a_number_the_question_says_is_no_answer(answer: str, states: bool):
    assert states_quantity(answer, VERSION_2) is states
    assert states_quantity(answer)  # without the question, every one of them states a number
