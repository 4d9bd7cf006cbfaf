"""The one exception type the protocol raises."""

from typing import Literal, get_args

ErrorCode = Literal["malformed", "too_large", "unknown_version", "unknown_type", "invalid_field"]
ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)


class ProtocolError(ValueError):
    """A message that cannot be encoded or decoded.

    `code` is machine-readable (one of ERROR_CODES), `message` says what is wrong for a human:
      malformed        not a msgpack map envelope: bad bytes or UTF-8, truncation, trailing data,
                       duplicate or non-string keys, bin/ext values, depth bombs, a string or array
                       longer than any field may be (refused while unpacking), missing or
                       non-integer "v", missing or non-string "t"
      too_large        over MAX_MESSAGE_BYTES (checked before unpacking on decode)
      unknown_version  "v" is an integer other than PROTOCOL_VERSION
      unknown_type     "t" names no message, or one the caller does not accept here
      invalid_field    a field is missing, extra, of the wrong type, out of range or too long,
                       or fields contradict each other (e.g. a cursor past the end of its text)
    """

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(code, message)  # both in args, so the error pickles and re-raises intact
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"
