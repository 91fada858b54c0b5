#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace patchbay
{
    /**
     * Just enough JSON for the licensing runtime. The parser is strict (RFC 8259 only, no duplicate keys, nesting
     * depth at most 32, text at most 1 MiB) because it reads untrusted input: server answers and the parts of a
     * token before its signature has been checked. Numbers are read without the C locale functions, so a host that
     * switched the locale (a German decimal comma, say) does not change what a token says.
     */
    class JsonValue
    {
    public:
        enum class Type { Null, Bool, Number, String, Array, Object };

        JsonValue() = default;

        /** Parses a complete JSON text; returns false (and leaves `out` null) when it is malformed. */
        static bool parse (const std::string& text, JsonValue& out);

        Type type() const noexcept { return type_; }
        bool isNull() const noexcept { return type_ == Type::Null; }
        bool isBool() const noexcept { return type_ == Type::Bool; }
        bool isNumber() const noexcept { return type_ == Type::Number; }
        bool isString() const noexcept { return type_ == Type::String; }
        bool isArray() const noexcept { return type_ == Type::Array; }
        bool isObject() const noexcept { return type_ == Type::Object; }

        /** True for a number written without fraction or exponent that fits in 64 bits. */
        bool isInteger() const noexcept { return type_ == Type::Number && integral_; }

        bool asBool (bool fallback = false) const noexcept { return isBool() ? bool_ : fallback; }
        std::int64_t asInt (std::int64_t fallback = 0) const noexcept { return isInteger() ? integer_ : fallback; }
        double asDouble (double fallback = 0.0) const noexcept { return isNumber() ? number_ : fallback; }
        /** The string, or "" for any other type. */
        const std::string& asString() const noexcept;

        /** Member of an object; a null value when absent or when this is not an object. */
        const JsonValue& operator[] (const std::string& key) const noexcept;
        bool has (const std::string& key) const noexcept;

        /** Elements of an array (empty for any other type). */
        const std::vector<JsonValue>& items() const noexcept { return array_; }
        /** Members of an object, in document order (empty for any other type). */
        const std::vector<std::pair<std::string, JsonValue>>& members() const noexcept { return object_; }

    private:
        friend class JsonParser;

        Type type_ = Type::Null;
        bool bool_ = false;
        bool integral_ = false;
        std::int64_t integer_ = 0;
        double number_ = 0.0;
        std::string string_;
        std::vector<JsonValue> array_;
        std::vector<std::pair<std::string, JsonValue>> object_;
    };

    /** `text` as a JSON string literal, quotes included (control characters escaped, UTF-8 kept as is). */
    std::string jsonQuote (const std::string& text);

    /** Builds a flat JSON object of string members, in insertion order. */
    class JsonObjectWriter
    {
    public:
        JsonObjectWriter& add (const std::string& key, const std::string& value);
        /** Adds the member only when `value` is not empty. */
        JsonObjectWriter& addIfNotEmpty (const std::string& key, const std::string& value);
        std::string str() const { return "{" + body_ + "}"; }

    private:
        std::string body_;
    };
}
