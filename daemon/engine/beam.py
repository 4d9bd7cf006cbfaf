"""The beam search's width limits, apart from the search itself: the configuration's schema names the default
without loading numpy."""

MAX_BEAM = 128  # live + scratch slots must stay within llama.cpp's 256 sequences
# The beam width when the model offers several conversions of its own (the config's candidates.beam_width).
DEFAULT_BEAM_WIDTH = 5
