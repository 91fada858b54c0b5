#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace patchbay
{
    /** base64url without padding (RFC 4648 section 5), as used by JWS and JWK. */
    std::string base64UrlEncode (const unsigned char* data, std::size_t size);
    std::string base64UrlEncode (const std::string& bytes);

    /**
     * Strict decoding: only the base64url alphabet, no padding, no whitespace, and the unused low bits of the last
     * character must be zero. The last rule matters for signatures: without it two different texts decode to the
     * same bytes, so a changed token could still verify.
     */
    bool base64UrlDecode (const std::string& text, std::vector<unsigned char>& out);
    bool base64UrlDecode (const std::string& text, std::string& out);
}
