#include "PatchbayBase64.h"

#include <cstdint>

namespace patchbay
{
    namespace
    {
        const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

        int valueOf (char c)
        {
            if (c >= 'A' && c <= 'Z') return c - 'A';
            if (c >= 'a' && c <= 'z') return c - 'a' + 26;
            if (c >= '0' && c <= '9') return c - '0' + 52;
            if (c == '-') return 62;
            if (c == '_') return 63;
            return -1;
        }
    }

    std::string base64UrlEncode (const unsigned char* data, std::size_t size)
    {
        std::string out;
        out.reserve ((size * 4 + 2) / 3);
        std::size_t i = 0;
        for (; i + 3 <= size; i += 3)
        {
            const std::uint32_t n = (std::uint32_t (data[i]) << 16) | (std::uint32_t (data[i + 1]) << 8) | data[i + 2];
            out += alphabet[(n >> 18) & 63];
            out += alphabet[(n >> 12) & 63];
            out += alphabet[(n >> 6) & 63];
            out += alphabet[n & 63];
        }
        if (size - i == 1)
        {
            const std::uint32_t n = std::uint32_t (data[i]) << 16;
            out += alphabet[(n >> 18) & 63];
            out += alphabet[(n >> 12) & 63];
        }
        else if (size - i == 2)
        {
            const std::uint32_t n = (std::uint32_t (data[i]) << 16) | (std::uint32_t (data[i + 1]) << 8);
            out += alphabet[(n >> 18) & 63];
            out += alphabet[(n >> 12) & 63];
            out += alphabet[(n >> 6) & 63];
        }
        return out;
    }

    std::string base64UrlEncode (const std::string& bytes)
    {
        return base64UrlEncode (reinterpret_cast<const unsigned char*> (bytes.data()), bytes.size());
    }

    bool base64UrlDecode (const std::string& text, std::vector<unsigned char>& out)
    {
        out.clear();
        if (text.size() % 4 == 1)
            return false;

        out.reserve (text.size() * 3 / 4);
        std::uint32_t buffer = 0;
        int bits = 0;
        for (const char c : text)
        {
            const int v = valueOf (c);
            if (v < 0)
                return false;
            buffer = (buffer << 6) | static_cast<std::uint32_t> (v);
            bits += 6;
            if (bits >= 8)
            {
                bits -= 8;
                out.push_back (static_cast<unsigned char> ((buffer >> bits) & 0xFF));
            }
        }
        // Leftover bits (2 or 4) must be zero: only the canonical encoding is accepted.
        if (bits > 0 && (buffer & ((1u << bits) - 1u)) != 0)
        {
            out.clear();
            return false;
        }
        return true;
    }

    bool base64UrlDecode (const std::string& text, std::string& out)
    {
        std::vector<unsigned char> bytes;
        if (! base64UrlDecode (text, bytes))
            return false;
        out.assign (bytes.begin(), bytes.end());
        return true;
    }
}
