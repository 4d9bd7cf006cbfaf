"""Every bound the protocol enforces, in one place. Text lengths count code points, not bytes."""

UINT32_MAX = 2**32 - 1  # keysyms, keycodes and modifier masks are 32-bit in X11, IBus and fcitx5
REQUEST_ID_MAX = 2**63 - 1  # fits a signed 64-bit integer on every peer

MAX_MESSAGE_BYTES = 256 * 1024  # whole encoded message; checked before unpacking
MAX_TEXT_CHARS = 4096  # commit, preedit (all segments together), surrounding text
MAX_CANDIDATE_CHARS = 1024  # one candidate: a whole-sentence conversion can be long
MAX_ANNOTATION_CHARS = 256
MAX_SHORT_TEXT_CHARS = 256  # aux line, model name, status reason
MAX_CANDIDATES = 1000
MAX_SEGMENTS = 256
MAX_PAGE_SIZE = 16  # also the most candidate labels

MAX_UTF8_BYTES_PER_CHAR = 4
MAX_MAP_ENTRIES = 16  # fields of any record plus the "v"/"t" envelope keys
