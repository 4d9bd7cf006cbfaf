// The few ime_protocol messages the fcitx5 addon speaks (ime_protocol/messages.py, codec.py):
// msgpack maps {"v": 2, "t": "<tag>", <field>: <value>, ...}. Encoding writes the bytes the Python codec
// writes; decoding refuses every Output the Python codec refuses (a peer of another version, bytes that
// are not one msgpack map, a field out of its limits), so nothing is misread. tests/integration/test_fcitx5_codec.py
// checks both against ime_protocol, byte for byte.
#ifndef TSUZURI_FCITX5_PROTOCOL_H
#define TSUZURI_FCITX5_PROTOCOL_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tsuzuri {

// ime_protocol.messages modifier masks (IBus/X11 layout).
constexpr uint32_t SHIFT_MASK = 1u << 0;
constexpr uint32_t LOCK_MASK = 1u << 1;
constexpr uint32_t CONTROL_MASK = 1u << 2;
constexpr uint32_t ALT_MASK = 1u << 3;
constexpr uint32_t NUM_LOCK_MASK = 1u << 4;
constexpr uint32_t SUPER_MASK = 1u << 26;
constexpr uint32_t HYPER_MASK = 1u << 27;
constexpr uint32_t META_MASK = 1u << 28;

// ime_protocol/limits.py; text lengths count code points.
constexpr uint64_t REQUEST_ID_MAX = (1ull << 63) - 1;
constexpr size_t MAX_MESSAGE_BYTES = 256 * 1024;
constexpr size_t MAX_TEXT_CHARS = 4096;
constexpr size_t MAX_CANDIDATE_CHARS = 1024;
constexpr size_t MAX_ANNOTATION_CHARS = 256;
constexpr size_t MAX_SHORT_TEXT_CHARS = 256;
constexpr size_t MAX_CANDIDATES = 1000;
constexpr size_t MAX_SEGMENTS = 256;
constexpr size_t MAX_PAGE_SIZE = 16;

// ime_protocol.messages.INPUT_MODES (Output.mode, SetInputMode).
constexpr const char *INPUT_MODES[] = {"hiragana", "katakana", "halfwidth_katakana", "fullwidth_ascii", "direct"};

// Values of ime_protocol.InputPurpose.
enum class InputPurpose { FreeForm, Alpha, Digits, Number, Phone, Url, Email, Name, Password, Terminal };

enum class RequestKind { Key, FocusIn, FocusOut, Reset, Discard, SelectCandidate, SurroundingText, SetInputMode };

// A frontend message, encoded; `kind` tells the session what to remember of it for a replay.
struct Request {
    RequestKind kind;
    std::vector<uint8_t> bytes;
    uint64_t requestId = 0;  // of a KeyEvent or SelectCandidate, echoed in the Output that answers it
    bool secretField = false;  // a FocusIn into a password field
};

Request keyEvent(uint32_t keyval, uint32_t keycode, uint32_t modifiers, uint64_t requestId);
Request focusIn(InputPurpose purpose);
Request focusOut();
Request reset();
Request discard();
Request selectCandidate(uint32_t index, uint64_t requestId);
// `mode`: one of INPUT_MODES.
Request setInputMode(const std::string &mode);
// `text` is cut to the protocol's limit around the cursor; positions count code points. Text the protocol
// cannot carry (invalid UTF-8, NUL) is sent as none. ime_protocol's SurroundingText.around_cursor is its twin.
Request surroundingText(const std::string &text, uint32_t cursor, uint32_t anchor);

enum class SegmentStyle { None, Underline, Highlight };

struct PreeditSegment {
    std::string text;
    SegmentStyle style;
};

struct Preedit {
    std::vector<PreeditSegment> segments;
    uint32_t cursor = 0;  // code points
};

struct CandidateItem {
    std::string text;
    std::string annotation;
};

struct CandidateWindow {
    std::vector<CandidateItem> items;
    uint32_t cursor = 0;  // index into items
    uint32_t pageSize = 1;
    std::vector<std::string> labels;  // one per page position
};

// Text around the cursor to delete: `before` code points just before it and `after` just after it.
struct SurroundingDeletion {
    uint32_t before = 0;
    uint32_t after = 0;
};

struct Output {
    uint64_t requestId = 0;
    bool consumed = false;
    std::string commit;
    Preedit preedit;
    std::optional<CandidateWindow> candidates;
    std::string aux;
    std::string mode;
    std::optional<SurroundingDeletion> deleteSurrounding;  // applied first, before the commit
};

// nullopt when `bytes` is not an Output of protocol version 2.
std::optional<Output> decodeOutput(const std::vector<uint8_t> &bytes);

} // namespace tsuzuri

#endif
