"""Pure retrieval maths: decay, confidence, the five signals, fusion, MMR, budgets and frames.

Everything here is a function over numpy arrays or plain data, with no I/O, so each formula can be
tested alone with hand-computed values and reused by the index, the rhythms and the API unchanged.
"""
