#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace patchbay
{
    /** One Ed25519 public key pinned from the JWKS. */
    struct PinnedKey
    {
        std::string kid;
        std::array<unsigned char, 32> publicKey {};
    };

    /** The claims of a license token that verified. */
    struct TokenClaims
    {
        std::string kid;
        std::string issuer;     // iss: "patchbay"
        std::string audience;   // aud: the productAppId
        std::string subject;    // sub: "serial:<id>"
        std::string serial;     // ser: the serial code
        std::string machineId;  // mid
        std::string nonce;      // nonce ("" when none was sent)
        std::int64_t serialId = 0;
        std::int64_t activationId = 0;
        std::int64_t issuedAt = 0;  // iat, Unix seconds
        std::int64_t expiresAt = 0; // exp, Unix seconds: the end of the offline grace
    };

    enum class TokenError
    {
        none,
        malformed,            // not three strict base64url parts of JSON objects
        unsupportedAlgorithm, // alg is not EdDSA (alg "none", HS256, RS256 ... are all refused)
        wrongType,            // typ is not license+jwt
        unknownKey,           // kid is not one of the pinned keys
        badSignature,
        wrongIssuer,
        wrongAudience,        // issued for another product (or environment)
        wrongMachine,         // issued for another computer
        expired,              // past exp (plus the allowed clock skew): the offline grace is over
        notYetValid,          // iat/nbf in the future: the clock was set back, or the token is not for now
    };

    /** Stable upper-case code of an error, e.g. "TOKEN_BAD_SIGNATURE". */
    const char* tokenErrorCode (TokenError error);
    /** A sentence for logs and the UI. */
    const char* tokenErrorText (TokenError error);

    struct TokenCheck
    {
        TokenError error = TokenError::malformed;
        /** Filled only when error == TokenError::none. */
        TokenClaims claims;

        bool ok() const noexcept { return error == TokenError::none; }
    };

    /**
     * Verifies license tokens offline against pinned keys. The header is checked first (alg must be EdDSA, typ
     * license+jwt, kid one of the pinned keys), then the Ed25519 signature over "<header>.<payload>" with
     * crypto_sign_verify_detached, and only then the claims: iss, aud == appId, mid == this machine, exp in the
     * future and iat/nbf not in the future (both with `clockSkewSeconds` of tolerance). Anything else is refused.
     */
    class TokenVerifier
    {
    public:
        /** `jwksJson` is the JWKS text; keys that are not Ed25519 signing keys are ignored. */
        TokenVerifier (const std::string& jwksJson, std::string appId, int clockSkewSeconds = 120);

        /** Pinned keys; none means every token is refused (the JWKS was empty or malformed). */
        const std::vector<PinnedKey>& keys() const noexcept { return keys_; }

        TokenCheck verify (const std::string& token, const std::string& machineId, std::int64_t nowSeconds) const;

    private:
        std::vector<PinnedKey> keys_;
        std::string appId_;
        std::int64_t skew_;
    };
}
