#include "PatchbayJson.h"

#include <cmath>
#include <limits>
#include <locale>
#include <sstream>

namespace patchbay
{
    namespace
    {
        constexpr int maxDepth = 32;
        constexpr std::size_t maxText = 1024 * 1024;

        void appendUtf8 (std::string& out, std::uint32_t cp)
        {
            if (cp < 0x80)
            {
                out += static_cast<char> (cp);
            }
            else if (cp < 0x800)
            {
                out += static_cast<char> (0xC0 | (cp >> 6));
                out += static_cast<char> (0x80 | (cp & 0x3F));
            }
            else if (cp < 0x10000)
            {
                out += static_cast<char> (0xE0 | (cp >> 12));
                out += static_cast<char> (0x80 | ((cp >> 6) & 0x3F));
                out += static_cast<char> (0x80 | (cp & 0x3F));
            }
            else
            {
                out += static_cast<char> (0xF0 | (cp >> 18));
                out += static_cast<char> (0x80 | ((cp >> 12) & 0x3F));
                out += static_cast<char> (0x80 | ((cp >> 6) & 0x3F));
                out += static_cast<char> (0x80 | (cp & 0x3F));
            }
        }
    }

    class JsonParser
    {
    public:
        explicit JsonParser (const std::string& text) : s (text) {}

        bool parseDocument (JsonValue& out)
        {
            if (s.size() > maxText)
                return false;

            skipSpace();
            if (! parseValue (out, 0))
                return false;

            skipSpace();
            return pos == s.size();
        }

    private:
        const std::string& s;
        std::size_t pos = 0;

        void skipSpace()
        {
            while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r'))
                ++pos;
        }

        bool literal (const char* word)
        {
            std::size_t i = 0;
            for (; word[i] != '\0'; ++i)
                if (pos + i >= s.size() || s[pos + i] != word[i])
                    return false;
            pos += i;
            return true;
        }

        bool parseValue (JsonValue& out, int depth)
        {
            if (depth > maxDepth || pos >= s.size())
                return false;

            switch (s[pos])
            {
                case '{': return parseObject (out, depth);
                case '[': return parseArray (out, depth);
                case '"': out.type_ = JsonValue::Type::String; return parseString (out.string_);
                case 't': out.type_ = JsonValue::Type::Bool; out.bool_ = true; return literal ("true");
                case 'f': out.type_ = JsonValue::Type::Bool; out.bool_ = false; return literal ("false");
                case 'n': out.type_ = JsonValue::Type::Null; return literal ("null");
                default: return parseNumber (out);
            }
        }

        bool parseObject (JsonValue& out, int depth)
        {
            out.type_ = JsonValue::Type::Object;
            ++pos;
            skipSpace();
            if (pos < s.size() && s[pos] == '}')
            {
                ++pos;
                return true;
            }

            for (;;)
            {
                skipSpace();
                std::string key;
                if (pos >= s.size() || s[pos] != '"' || ! parseString (key))
                    return false;

                // Duplicate keys are refused: two readers of one token must never see two different claims.
                for (const auto& member : out.object_)
                    if (member.first == key)
                        return false;

                skipSpace();
                if (pos >= s.size() || s[pos++] != ':')
                    return false;

                skipSpace();
                JsonValue value;
                if (! parseValue (value, depth + 1))
                    return false;

                out.object_.emplace_back (std::move (key), std::move (value));
                skipSpace();
                if (pos >= s.size())
                    return false;
                if (s[pos] == ',')
                {
                    ++pos;
                    continue;
                }
                if (s[pos] == '}')
                {
                    ++pos;
                    return true;
                }
                return false;
            }
        }

        bool parseArray (JsonValue& out, int depth)
        {
            out.type_ = JsonValue::Type::Array;
            ++pos;
            skipSpace();
            if (pos < s.size() && s[pos] == ']')
            {
                ++pos;
                return true;
            }

            for (;;)
            {
                skipSpace();
                JsonValue value;
                if (! parseValue (value, depth + 1))
                    return false;

                out.array_.push_back (std::move (value));
                skipSpace();
                if (pos >= s.size())
                    return false;
                if (s[pos] == ',')
                {
                    ++pos;
                    continue;
                }
                if (s[pos] == ']')
                {
                    ++pos;
                    return true;
                }
                return false;
            }
        }

        bool hex4 (std::uint32_t& value)
        {
            if (pos + 4 > s.size())
                return false;

            value = 0;
            for (int i = 0; i < 4; ++i)
            {
                const char c = s[pos++];
                value <<= 4;
                if (c >= '0' && c <= '9')
                    value |= static_cast<std::uint32_t> (c - '0');
                else if (c >= 'a' && c <= 'f')
                    value |= static_cast<std::uint32_t> (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                    value |= static_cast<std::uint32_t> (c - 'A' + 10);
                else
                    return false;
            }
            return true;
        }

        bool parseString (std::string& out)
        {
            ++pos; // opening quote
            while (pos < s.size())
            {
                const auto c = static_cast<unsigned char> (s[pos++]);
                if (c == '"')
                    return true;
                if (c < 0x20)
                    return false;
                if (c != '\\')
                {
                    out += static_cast<char> (c);
                    continue;
                }

                if (pos >= s.size())
                    return false;

                switch (s[pos++])
                {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'n': out += '\n'; break;
                    case 'r': out += '\r'; break;
                    case 't': out += '\t'; break;
                    case 'u':
                    {
                        std::uint32_t cp = 0;
                        if (! hex4 (cp))
                            return false;
                        if (cp >= 0xDC00 && cp <= 0xDFFF)
                            return false; // a lone low surrogate
                        if (cp >= 0xD800 && cp <= 0xDBFF)
                        {
                            std::uint32_t low = 0;
                            if (pos + 2 > s.size() || s[pos] != '\\' || s[pos + 1] != 'u')
                                return false;
                            pos += 2;
                            if (! hex4 (low) || low < 0xDC00 || low > 0xDFFF)
                                return false;
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        }
                        appendUtf8 (out, cp);
                        break;
                    }
                    default: return false;
                }
            }
            return false;
        }

        bool parseNumber (JsonValue& out)
        {
            const std::size_t start = pos;
            if (pos < s.size() && s[pos] == '-')
                ++pos;

            auto digit = [this] { return pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; };

            if (! digit())
                return false;
            if (s[pos] == '0')
                ++pos;
            else
                while (digit())
                    ++pos;

            bool integral = true;
            if (pos < s.size() && s[pos] == '.')
            {
                integral = false;
                ++pos;
                if (! digit())
                    return false;
                while (digit())
                    ++pos;
            }
            if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E'))
            {
                integral = false;
                ++pos;
                if (pos < s.size() && (s[pos] == '+' || s[pos] == '-'))
                    ++pos;
                if (! digit())
                    return false;
                while (digit())
                    ++pos;
            }

            const std::string text = s.substr (start, pos - start);
            out.type_ = JsonValue::Type::Number;

            if (integral)
            {
                // Accumulate as a negative number so INT64_MIN fits; anything longer is not integral.
                const bool negative = text[0] == '-';
                std::int64_t value = 0;
                bool overflow = false;
                for (std::size_t i = negative ? 1 : 0; i < text.size(); ++i)
                {
                    const int d = text[i] - '0';
                    if (value < (std::numeric_limits<std::int64_t>::min() + d) / 10)
                    {
                        overflow = true;
                        break;
                    }
                    value = value * 10 - d;
                }
                if (! overflow && (negative || value != std::numeric_limits<std::int64_t>::min()))
                {
                    out.integral_ = true;
                    out.integer_ = negative ? value : -value;
                    out.number_ = static_cast<double> (out.integer_);
                    return true;
                }
            }

            std::istringstream stream (text);
            stream.imbue (std::locale::classic());
            double value = 0.0;
            stream >> value;
            if (stream.fail() || ! std::isfinite (value))
                return false;
            out.number_ = value;
            return true;
        }
    };

    bool JsonValue::parse (const std::string& text, JsonValue& out)
    {
        JsonValue value;
        JsonParser parser (text);
        if (! parser.parseDocument (value))
        {
            out = JsonValue();
            return false;
        }
        out = std::move (value);
        return true;
    }

    const std::string& JsonValue::asString() const noexcept
    {
        static const std::string empty;
        return isString() ? string_ : empty;
    }

    const JsonValue& JsonValue::operator[] (const std::string& key) const noexcept
    {
        static const JsonValue null;
        for (const auto& member : object_)
            if (member.first == key)
                return member.second;
        return null;
    }

    bool JsonValue::has (const std::string& key) const noexcept
    {
        for (const auto& member : object_)
            if (member.first == key)
                return true;
        return false;
    }

    std::string jsonQuote (const std::string& text)
    {
        static const char* hex = "0123456789abcdef";
        std::string out = "\"";
        for (const char ch : text)
        {
            const auto c = static_cast<unsigned char> (ch);
            switch (c)
            {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                default:
                    if (c < 0x20)
                    {
                        out += "\\u00";
                        out += hex[c >> 4];
                        out += hex[c & 0x0F];
                    }
                    else
                    {
                        out += ch;
                    }
            }
        }
        return out + "\"";
    }

    JsonObjectWriter& JsonObjectWriter::add (const std::string& key, const std::string& value)
    {
        if (! body_.empty())
            body_ += ",";
        body_ += jsonQuote (key) + ":" + jsonQuote (value);
        return *this;
    }

    JsonObjectWriter& JsonObjectWriter::addIfNotEmpty (const std::string& key, const std::string& value)
    {
        return value.empty() ? *this : add (key, value);
    }
}
