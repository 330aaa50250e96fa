"""pytorch/tutorials beginner_source/nlp/sequence_models_tutorial.py (LSTM part-of-speech
tagger; old-style autograd.Variable code). It needs no data and takes no flags."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

run_program("sequence_models_tutorial.py")
