"""pytorch/examples reinforcement_learning/reinforce.py on a stand-in CartPole-v1 (_standins/gymnasium).

The program trains until its running reward passes the environment's reward threshold; the
stand-in's threshold is lowered to 30 so that it ends after a few episodes."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _harness import run_program  # noqa: E402

os.environ.setdefault("STANDIN_REWARD_THRESHOLD", "30")
run_program("reinforce.py", ["--log-interval", "1"])
