"""Judging answers in eval, independently of the pipeline's own checks.

The pipeline validates its answers with `docent_native`; if eval reused that
code, a bug in it would grade itself. These judges are written separately,
plain Python over the answer text and the blocks it cites:

- `claims`: an answer cut into cited claims and sentences;
- `facts`: the numbers, identifiers, quoted terms and names a sentence states,
  and whether its cited blocks state them too;
- `polarity`: a sentence that says the opposite of the block sentence it
  paraphrases, and an answer's yes/no stance against a documented answer;
- `leaks`: the chunker's context line showing up in what users see;
- `verdict`: all of it for one row.
"""
