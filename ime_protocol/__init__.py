"""Tsuzuri's wire protocol between the daemon and its frontends.

Typed, frozen message dataclasses (messages.py) that validate themselves through one declarative
schema (schema.py), every bound in limits.py, and a strict msgpack codec (codec.py, which documents
the wire format). This package imports nothing from daemon/ or frontends/: both depend on it.
"""
from .codec import PROTOCOL_VERSION, decode, encode
from .errors import ERROR_CODES, ErrorCode, ProtocolError
from .limits import (MAX_ANNOTATION_CHARS, MAX_CANDIDATE_CHARS, MAX_CANDIDATES, MAX_MESSAGE_BYTES,
                     MAX_PAGE_SIZE, MAX_SEGMENTS, MAX_SHORT_TEXT_CHARS, MAX_TEXT_CHARS, REQUEST_ID_MAX,
                     UINT32_MAX)
from .messages import (ALT_MASK, COMMAND_MODIFIERS, CONTROL_MASK, DAEMON_MESSAGES, FRONTEND_MESSAGES,
                       HYPER_MASK, INPUT_MODES, LOCK_MASK, META_MASK, NUM_LOCK_MASK,
                       RELEASE_MASK, SHIFT_MASK, SUPER_MASK, CandidateItem, CandidateWindow, DaemonMessage,
                       Discard, FocusIn, FocusOut, FrontendMessage, InputPurpose, KeyEvent, Output, Preedit,
                       PreeditSegment, Reset, SegmentStyle, SelectCandidate, SetInputMode,
                       SurroundingDeletion, SurroundingText)

__all__ = [
    "PROTOCOL_VERSION", "encode", "decode", "ProtocolError", "ErrorCode", "ERROR_CODES",
    "MAX_MESSAGE_BYTES", "MAX_TEXT_CHARS", "MAX_CANDIDATE_CHARS", "MAX_ANNOTATION_CHARS",
    "MAX_SHORT_TEXT_CHARS", "MAX_CANDIDATES", "MAX_SEGMENTS", "MAX_PAGE_SIZE", "UINT32_MAX", "REQUEST_ID_MAX",
    "SHIFT_MASK", "LOCK_MASK", "CONTROL_MASK", "ALT_MASK", "NUM_LOCK_MASK", "SUPER_MASK", "HYPER_MASK",
    "META_MASK", "RELEASE_MASK", "COMMAND_MODIFIERS", "INPUT_MODES",
    "KeyEvent", "SurroundingText", "FocusIn", "FocusOut", "Reset", "Discard", "SelectCandidate", "SetInputMode",
    "InputPurpose", "SurroundingDeletion", "Output", "Preedit", "PreeditSegment", "SegmentStyle", "CandidateWindow",
    "CandidateItem", "FrontendMessage", "DaemonMessage", "FRONTEND_MESSAGES", "DAEMON_MESSAGES",
]
