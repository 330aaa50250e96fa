"""Stand-in for tiktoken (not installed): sample.py imports it but, with the stand-in data's
meta.pkl present, encodes with its own character table instead."""


def get_encoding(name):
    raise RuntimeError("the tiktoken stand-in has no encodings")
