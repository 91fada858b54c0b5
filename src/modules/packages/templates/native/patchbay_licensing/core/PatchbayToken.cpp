#include "PatchbayToken.h"

#include "PatchbayBase64.h"
#include "PatchbayJson.h"
#include "PatchbayMachine.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

namespace patchbay
{
    namespace
    {
        constexpr const char* tokenType = "license+jwt";
        constexpr const char* tokenIssuer = "patchbay";
        constexpr std::size_t maxTokenLength = 8192;

        bool decodeObject (const std::string& part, JsonValue& out)
        {
            std::string json;
            return base64UrlDecode (part, json) && JsonValue::parse (json, out) && out.isObject();
        }

        bool optionalString (const JsonValue& object, const char* key, std::string& out)
        {
            const JsonValue& value = object[key];
            if (value.isNull() && ! object.has (key))
                return true;
            if (! value.isString())
                return false;
            out = value.asString();
            return true;
        }

        bool optionalInteger (const JsonValue& object, const char* key, std::int64_t& out)
        {
            if (! object.has (key))
                return true;
            if (! object[key].isInteger())
                return false;
            out = object[key].asInt();
            return true;
        }
    }

    const char* tokenErrorCode (TokenError error)
    {
        switch (error)
        {
            case TokenError::none: return "TOKEN_VALID";
            case TokenError::malformed: return "TOKEN_MALFORMED";
            case TokenError::unsupportedAlgorithm: return "TOKEN_UNSUPPORTED_ALGORITHM";
            case TokenError::wrongType: return "TOKEN_WRONG_TYPE";
            case TokenError::unknownKey: return "TOKEN_UNKNOWN_KEY";
            case TokenError::badSignature: return "TOKEN_BAD_SIGNATURE";
            case TokenError::wrongIssuer: return "TOKEN_WRONG_ISSUER";
            case TokenError::wrongAudience: return "TOKEN_WRONG_PRODUCT";
            case TokenError::wrongMachine: return "TOKEN_WRONG_MACHINE";
            case TokenError::expired: return "TOKEN_EXPIRED";
            case TokenError::notYetValid: return "TOKEN_NOT_YET_VALID";
        }
        return "TOKEN_MALFORMED";
    }

    const char* tokenErrorText (TokenError error)
    {
        switch (error)
        {
            case TokenError::none: return "The license token is valid.";
            case TokenError::malformed: return "The stored license is damaged.";
            case TokenError::unsupportedAlgorithm: return "The license token uses an algorithm this plugin does not accept.";
            case TokenError::wrongType: return "The license token is not a license token.";
            case TokenError::unknownKey: return "The license token was signed with a key this plugin does not know. An update of the plugin may be needed.";
            case TokenError::badSignature: return "The license token's signature is not valid.";
            case TokenError::wrongIssuer: return "The license token was not issued by the licensing service.";
            case TokenError::wrongAudience: return "The license token belongs to another product.";
            case TokenError::wrongMachine: return "The license token belongs to another computer.";
            case TokenError::expired: return "The offline period is over: connect to the internet to confirm the license.";
            case TokenError::notYetValid: return "The license token is not valid yet: check the computer's clock.";
        }
        return "The stored license is damaged.";
    }

    TokenVerifier::TokenVerifier (const std::string& jwksJson, std::string appId, int clockSkewSeconds)
        : appId_ (std::move (appId)), skew_ (clockSkewSeconds < 0 ? 0 : clockSkewSeconds)
    {
        JsonValue jwks;
        if (! JsonValue::parse (jwksJson, jwks) || ! jwks["keys"].isArray())
            return;

        for (const auto& jwk : jwks["keys"].items())
        {
            if (jwk["kty"].asString() != "OKP" || jwk["crv"].asString() != "Ed25519" || jwk["kid"].asString().empty())
                continue;
            if (jwk.has ("alg") && jwk["alg"].asString() != "EdDSA")
                continue;
            if (jwk.has ("use") && jwk["use"].asString() != "sig")
                continue;
            std::vector<unsigned char> x;
            if (! base64UrlDecode (jwk["x"].asString(), x) || x.size() != 32)
                continue;
            PinnedKey key;
            key.kid = jwk["kid"].asString();
            std::copy (x.begin(), x.end(), key.publicKey.begin());
            keys_.push_back (key);
        }
    }

    TokenCheck TokenVerifier::verify (const std::string& token, const std::string& machineId, std::int64_t now) const
    {
        TokenCheck check;
        auto fail = [&check] (TokenError error) {
            check.error = error;
            check.claims = TokenClaims();
            return check;
        };

        if (token.empty() || token.size() > maxTokenLength || ! ensureSodium())
            return fail (TokenError::malformed);

        const auto dot1 = token.find ('.');
        const auto dot2 = dot1 == std::string::npos ? std::string::npos : token.find ('.', dot1 + 1);
        if (dot2 == std::string::npos || token.find ('.', dot2 + 1) != std::string::npos)
            return fail (TokenError::malformed);

        JsonValue header;
        if (! decodeObject (token.substr (0, dot1), header))
            return fail (TokenError::malformed);
        if (! header["alg"].isString() || header["alg"].asString() != "EdDSA")
            return fail (TokenError::unsupportedAlgorithm);
        if (! header["typ"].isString() || header["typ"].asString() != tokenType)
            return fail (TokenError::wrongType);
        if (header.has ("crit"))
            return fail (TokenError::malformed); // no extensions are understood, so none may be critical

        const PinnedKey* key = nullptr;
        for (const auto& candidate : keys_)
            if (header["kid"].isString() && candidate.kid == header["kid"].asString())
                key = &candidate;
        if (key == nullptr)
            return fail (TokenError::unknownKey);

        std::vector<unsigned char> signature;
        if (! base64UrlDecode (token.substr (dot2 + 1), signature) || signature.size() != crypto_sign_BYTES)
            return fail (TokenError::badSignature);

        const std::string signingInput = token.substr (0, dot2);
        if (crypto_sign_verify_detached (signature.data(),
                                         reinterpret_cast<const unsigned char*> (signingInput.data()),
                                         signingInput.size(),
                                         key->publicKey.data()) != 0)
            return fail (TokenError::badSignature);

        // From here on the payload is the server's own words; it is still parsed strictly.
        JsonValue payload;
        if (! decodeObject (token.substr (dot1 + 1, dot2 - dot1 - 1), payload))
            return fail (TokenError::malformed);

        TokenClaims& c = check.claims;
        c.kid = key->kid;
        if (! payload["iss"].isString() || ! payload["aud"].isString() || ! payload["mid"].isString() || ! payload["exp"].isInteger())
            return fail (TokenError::malformed);
        c.issuer = payload["iss"].asString();
        c.audience = payload["aud"].asString();
        c.machineId = payload["mid"].asString();
        c.expiresAt = payload["exp"].asInt();
        std::int64_t notBefore = 0;
        if (! optionalString (payload, "sub", c.subject) || ! optionalString (payload, "ser", c.serial)
            || ! optionalString (payload, "nonce", c.nonce) || ! optionalInteger (payload, "sid", c.serialId)
            || ! optionalInteger (payload, "act", c.activationId) || ! optionalInteger (payload, "iat", c.issuedAt)
            || ! optionalInteger (payload, "nbf", notBefore))
            return fail (TokenError::malformed);

        if (c.issuer != tokenIssuer)
            return fail (TokenError::wrongIssuer);
        if (c.audience != appId_)
            return fail (TokenError::wrongAudience);
        if (machineId.empty() || c.machineId != machineId)
            return fail (TokenError::wrongMachine);
        if (now >= c.expiresAt + skew_)
            return fail (TokenError::expired);
        if (c.issuedAt > now + skew_ || notBefore > now + skew_)
            return fail (TokenError::notYetValid);

        check.error = TokenError::none;
        return check;
    }
}
