#include "protocol.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string_view>

#include <fcitx-utils/utf8.h>
#include <msgpack.h>

namespace tsuzuri {
namespace {

constexpr uint64_t PROTOCOL_VERSION = 2;

const char *purposeName(InputPurpose purpose) {
    switch (purpose) {
    case InputPurpose::FreeForm: return "free_form";
    case InputPurpose::Alpha: return "alpha";
    case InputPurpose::Digits: return "digits";
    case InputPurpose::Number: return "number";
    case InputPurpose::Phone: return "phone";
    case InputPurpose::Url: return "url";
    case InputPurpose::Email: return "email";
    case InputPurpose::Name: return "name";
    case InputPurpose::Password: return "password";
    case InputPurpose::Terminal: return "terminal";
    }
    return "free_form";
}

// Writes one message map: the envelope, then the fields in the order they are added.
class MessageWriter {
public:
    MessageWriter(const char *tag, uint32_t fieldCount) {
        msgpack_sbuffer_init(&buffer_);
        msgpack_packer_init(&packer_, &buffer_, msgpack_sbuffer_write);
        msgpack_pack_map(&packer_, fieldCount + 2);
        addUnsigned("v", PROTOCOL_VERSION);
        addString("t", tag);
    }
    ~MessageWriter() { msgpack_sbuffer_destroy(&buffer_); }
    MessageWriter(const MessageWriter &) = delete;
    MessageWriter &operator=(const MessageWriter &) = delete;

    MessageWriter &addUnsigned(std::string_view key, uint64_t value) {
        packString(key);
        msgpack_pack_uint64(&packer_, value);
        return *this;
    }
    MessageWriter &addString(std::string_view key, std::string_view value) {
        packString(key);
        packString(value);
        return *this;
    }
    Request finish(RequestKind kind) const {
        return {kind, std::vector<uint8_t>(buffer_.data, buffer_.data + buffer_.size)};
    }

private:
    void packString(std::string_view text) {
        msgpack_pack_str(&packer_, text.size());
        msgpack_pack_str_body(&packer_, text.data(), text.size());
    }
    msgpack_sbuffer buffer_;
    msgpack_packer packer_;
};

// Whether `text` is a protocol string (ime_protocol/schema.py): UTF-8 without NUL (fcitx's check also refuses
// overlong forms and encoded surrogates), at most `maxChars` code points.
bool validText(const std::string &text, size_t maxChars) {
    if (text.empty()) return true;
    if (text.find('\0') != std::string::npos) return false;
    auto length = fcitx::utf8::lengthValidated(text);
    return length != fcitx::utf8::INVALID_LENGTH && length <= maxChars;
}

size_t codePoints(const std::string &text) { return text.empty() ? 0 : fcitx::utf8::length(text); }

// Reads the fields of one msgpack map that must hold exactly `fieldCount` string keys. Each read checks
// the field's type and bounds; one that fails, or a field that is missing, makes the map invalid.
class MapReader {
public:
    MapReader(const msgpack_object &object, uint32_t fieldCount)
        : map_(object.type == MSGPACK_OBJECT_MAP && object.via.map.size == fieldCount ? &object.via.map : nullptr) {}

    bool valid() const { return map_ != nullptr && ok_; }

    const msgpack_object *field(std::string_view name) {
        if (map_ != nullptr) {
            for (uint32_t i = 0; i < map_->size; ++i) {
                const auto &key = map_->ptr[i].key;
                if (key.type == MSGPACK_OBJECT_STR && std::string_view(key.via.str.ptr, key.via.str.size) == name) {
                    return &map_->ptr[i].val;
                }
            }
        }
        ok_ = false;
        return nullptr;
    }
    std::string string(std::string_view name, size_t maxChars) {
        const auto *value = typed(name, MSGPACK_OBJECT_STR);
        if (value == nullptr) return {};
        std::string text(value->via.str.ptr, value->via.str.size);
        return check(validText(text, maxChars)) ? text : std::string();
    }
    uint64_t unsignedInt(std::string_view name, uint64_t max) {
        const auto *value = typed(name, MSGPACK_OBJECT_POSITIVE_INTEGER);
        return value != nullptr && check(value->via.u64 <= max) ? value->via.u64 : 0;
    }
    bool boolean(std::string_view name) {
        const auto *value = typed(name, MSGPACK_OBJECT_BOOLEAN);
        return value != nullptr && value->via.boolean;
    }
    // The elements of an array field of at most `maxItems`; empty (and the map invalid) if it is not one.
    std::vector<const msgpack_object *> array(std::string_view name, size_t maxItems) {
        const auto *value = typed(name, MSGPACK_OBJECT_ARRAY);
        std::vector<const msgpack_object *> elements;
        if (value == nullptr || !check(value->via.array.size <= maxItems)) return elements;
        for (uint32_t i = 0; i < value->via.array.size; ++i) {
            elements.push_back(&value->via.array.ptr[i]);
        }
        return elements;
    }

private:
    const msgpack_object *typed(std::string_view name, msgpack_object_type type) {
        const auto *value = field(name);
        return value != nullptr && check(value->type == type) ? value : nullptr;
    }
    bool check(bool holds) {
        ok_ = ok_ && holds;
        return holds;
    }

    const msgpack_object_map *map_;
    bool ok_ = true;
};

std::optional<SegmentStyle> segmentStyle(const std::string &name) {
    if (name == "none") return SegmentStyle::None;
    if (name == "underline") return SegmentStyle::Underline;
    if (name == "highlight") return SegmentStyle::Highlight;
    return std::nullopt;
}

std::optional<Preedit> readPreedit(const msgpack_object &object) {
    MapReader reader(object, 2);
    Preedit preedit;
    size_t length = 0, highlights = 0;
    for (const auto *element : reader.array("segments", MAX_SEGMENTS)) {
        MapReader segment(*element, 2);
        auto text = segment.string("text", MAX_TEXT_CHARS);
        auto style = segmentStyle(segment.string("style", MAX_TEXT_CHARS));
        if (!segment.valid() || !style) return std::nullopt;
        length += codePoints(text);
        highlights += *style == SegmentStyle::Highlight;
        preedit.segments.push_back({std::move(text), *style});
    }
    preedit.cursor = reader.unsignedInt("cursor", MAX_TEXT_CHARS);
    if (!reader.valid() || length > MAX_TEXT_CHARS || preedit.cursor > length || highlights > 1) return std::nullopt;
    return preedit;
}

std::vector<std::string> utf8Characters(const std::string &text) {  // `text` is valid UTF-8
    std::vector<std::string> characters;
    for (auto it = text.begin(); it != text.end();) {
        auto next = fcitx::utf8::nextChar(it);
        characters.emplace_back(it, next);
        it = next;
    }
    return characters;
}

std::optional<CandidateWindow> readCandidateWindow(const msgpack_object &object) {
    MapReader reader(object, 4);
    CandidateWindow window;
    for (const auto *element : reader.array("items", MAX_CANDIDATES)) {
        MapReader item(*element, 2);
        auto text = item.string("text", MAX_CANDIDATE_CHARS);
        auto annotation = item.string("annotation", MAX_ANNOTATION_CHARS);
        if (!item.valid()) return std::nullopt;
        window.items.push_back({std::move(text), std::move(annotation)});
    }
    window.cursor = reader.unsignedInt("cursor", MAX_CANDIDATES - 1);
    window.pageSize = reader.unsignedInt("page_size", MAX_PAGE_SIZE);
    window.labels = utf8Characters(reader.string("labels", MAX_PAGE_SIZE));
    if (!reader.valid() || window.items.empty() || window.cursor >= window.items.size() || window.pageSize == 0 ||
        window.labels.size() != window.pageSize) {
        return std::nullopt;
    }
    return window;
}

std::optional<SurroundingDeletion> readSurroundingDeletion(const msgpack_object &object) {
    MapReader reader(object, 2);
    SurroundingDeletion deletion;
    deletion.before = reader.unsignedInt("before", MAX_TEXT_CHARS);
    deletion.after = reader.unsignedInt("after", MAX_TEXT_CHARS);
    if (!reader.valid() || deletion.before + deletion.after == 0) return std::nullopt;
    return deletion;
}

bool isInputMode(const std::string &mode) {
    return std::find(std::begin(INPUT_MODES), std::end(INPUT_MODES), mode) != std::end(INPUT_MODES);
}

std::optional<Output> readOutput(const msgpack_object &object) {
    MapReader reader(object, 10);
    if (reader.unsignedInt("v", PROTOCOL_VERSION) != PROTOCOL_VERSION ||
        reader.string("t", MAX_SHORT_TEXT_CHARS) != "output") {
        return std::nullopt;
    }
    Output output;
    output.requestId = reader.unsignedInt("request_id", REQUEST_ID_MAX);
    output.consumed = reader.boolean("consumed");
    output.commit = reader.string("commit", MAX_TEXT_CHARS);
    output.aux = reader.string("aux", MAX_SHORT_TEXT_CHARS);
    output.mode = reader.string("mode", MAX_SHORT_TEXT_CHARS);
    const auto *preedit = reader.field("preedit");
    const auto *candidates = reader.field("candidates");
    const auto *deletion = reader.field("delete_surrounding");
    if (!reader.valid() || !isInputMode(output.mode)) return std::nullopt;
    auto decodedPreedit = readPreedit(*preedit);
    if (!decodedPreedit) return std::nullopt;
    output.preedit = std::move(*decodedPreedit);
    if (candidates->type != MSGPACK_OBJECT_NIL) {
        output.candidates = readCandidateWindow(*candidates);
        if (!output.candidates) return std::nullopt;
    }
    if (deletion->type != MSGPACK_OBJECT_NIL) {
        output.deleteSurrounding = readSurroundingDeletion(*deletion);
        if (!output.deleteSurrounding) return std::nullopt;
    }
    return output;
}

// Byte offset of code point `index` in `text`, clamped to its end.
size_t byteOffset(const std::string &text, size_t index) {
    auto it = text.begin();
    for (size_t i = 0; i < index && it != text.end(); ++i) {
        it = fcitx::utf8::nextChar(it);
    }
    return it - text.begin();
}

} // namespace

Request keyEvent(uint32_t keyval, uint32_t keycode, uint32_t modifiers, uint64_t requestId) {
    auto request = MessageWriter("key_event", 4)
                       .addUnsigned("keyval", keyval)
                       .addUnsigned("keycode", keycode)
                       .addUnsigned("modifiers", modifiers)
                       .addUnsigned("request_id", requestId)
                       .finish(RequestKind::Key);
    request.requestId = requestId;
    return request;
}

Request focusIn(InputPurpose purpose) {
    auto request = MessageWriter("focus_in", 1).addString("purpose", purposeName(purpose)).finish(RequestKind::FocusIn);
    request.secretField = purpose == InputPurpose::Password;
    return request;
}

Request focusOut() { return MessageWriter("focus_out", 0).finish(RequestKind::FocusOut); }

Request reset() { return MessageWriter("reset", 0).finish(RequestKind::Reset); }

Request discard() { return MessageWriter("discard", 0).finish(RequestKind::Discard); }

Request setInputMode(const std::string &mode) {
    return MessageWriter("set_input_mode", 1).addString("mode", mode).finish(RequestKind::SetInputMode);
}

Request selectCandidate(uint32_t index, uint64_t requestId) {
    auto request = MessageWriter("select_candidate", 2)
                       .addUnsigned("index", index)
                       .addUnsigned("request_id", requestId)
                       .finish(RequestKind::SelectCandidate);
    request.requestId = requestId;
    return request;
}

Request surroundingText(const std::string &text, uint32_t cursor, uint32_t anchor) {
    if (!validText(text, SIZE_MAX)) return surroundingText("", 0, 0);
    size_t length = codePoints(text);
    size_t cursorInText = std::min<size_t>(cursor, length);
    size_t start = cursorInText > MAX_TEXT_CHARS / 2 ? cursorInText - MAX_TEXT_CHARS / 2 : 0;
    size_t startByte = byteOffset(text, start);
    std::string window = text.substr(startByte, byteOffset(text, start + MAX_TEXT_CHARS) - startByte);
    size_t windowLength = codePoints(window);
    auto clamp = [&](uint32_t position) {
        return std::min<size_t>(position > start ? position - start : 0, windowLength);
    };
    return MessageWriter("surrounding_text", 3)
        .addString("text", window)
        .addUnsigned("cursor", clamp(cursor))
        .addUnsigned("anchor", clamp(anchor))
        .finish(RequestKind::SurroundingText);
}

std::optional<Output> decodeOutput(const std::vector<uint8_t> &bytes) {
    if (bytes.size() > MAX_MESSAGE_BYTES) return std::nullopt;  // checked before unpacking, as codec.py does
    msgpack_unpacked unpacked;
    msgpack_unpacked_init(&unpacked);
    size_t offset = 0;
    std::optional<Output> output;
    if (msgpack_unpack_next(&unpacked, reinterpret_cast<const char *>(bytes.data()), bytes.size(), &offset) ==
            MSGPACK_UNPACK_SUCCESS &&
        offset == bytes.size()) {
        output = readOutput(unpacked.data);
    }
    msgpack_unpacked_destroy(&unpacked);
    return output;
}

} // namespace tsuzuri
