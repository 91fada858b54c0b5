#pragma once

#include "../PatchbayConfig.h"
#include "PatchbayHttp.h"
#include "PatchbayStore.h"
#include "PatchbayToken.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace patchbay
{
    /** What the plugin shows, from PatchbayConfig.h. */
    enum class ExperienceMode { validationOnly, storefrontOnly, storefrontValidation };

    ExperienceMode configuredExperience();
    /** The license panel asks for a serial (validation-only and storefront-validation). */
    bool experienceValidates (ExperienceMode mode);
    /** The panel offers the store (storefront-only and storefront-validation, when a storefront URL is set). */
    bool experienceShowsStore (ExperienceMode mode);

    struct LicenseOptions
    {
        std::string appId = config::appId;
        std::string productKey = config::productKey;
        /** Override for staging or tests; no trailing slash. */
        std::string baseUrl = config::licensingBaseUrl;
        std::string pinnedJwks = config::pinnedJwks;
        /** "" computes machineIdFor(appId); set it only in tests. */
        std::string machineId;
        /** "" uses LicenseStore::defaultFile(appId). */
        std::filesystem::path licenseFile;
        /** Sent on activation and shown in the vendor's dashboard; optional. Never a user name or e-mail. */
        std::string appVersion;
        std::string machineName;
        int timeoutMs = 10000;
        /** Tolerance for a computer clock that is slightly wrong, applied to exp and iat. */
        int clockSkewSeconds = 120;
        /** Unix seconds; empty uses the system clock (tests replace it to move through the offline grace). */
        std::function<std::int64_t()> clock;
    };

    namespace detail
    {
        /** A random nonce for one request: 16 bytes, base64url. */
        std::string newNonce();
        /** The serial as typed, without the whitespace around it. */
        std::string trimSerial (const std::string& text);
    }

    /**
     * The outcome of a licensing call. `licensed` is the one thing the plugin acts on; `code` says why, in the
     * server's words when the server answered (VALID, MACHINE_LIMIT_EXCEEDED, LICENSE_REVOKED, REVOKED,
     * MACHINE_NOT_ACTIVATED, RATE_LIMITED, INVALID_PRODUCT_KEY ...) and otherwise one of the client's:
     * OFFLINE_VALID (the stored token verified; no server confirmation in this call), NO_LICENSE, NETWORK_ERROR,
     * SERVER_ERROR, STORAGE_TAMPERED, STORAGE_FAILED, NO_MACHINE_ID, SERIAL_REQUIRED, RELEASED, TOKEN_REPLAYED,
     * REQUEST_READY and LICENSE_FILE_UNREADABLE (offline activation) and the TOKEN_* codes of tokenErrorCode().
     */
    struct LicenseStatus
    {
        bool licensed = false;
        std::string code;
        std::string detail;
        std::string serial;
        /** When the offline grace of the current token ends (Unix seconds); 0 without a valid token. */
        std::int64_t expiresAt = 0;
        /** The HTTP status of this call's answer; 0 when no server answered (or no call was made). */
        int httpStatus = 0;
        /** deactivate(): the server freed a seat in this call (false when the machine held none). */
        bool released = false;
    };

    /** Offline activation, step 1: the machine request file for a computer without internet. */
    struct MachineRequest
    {
        /**
         * REQUEST_READY when `content` is the file to save; else SERIAL_REQUIRED, NO_MACHINE_ID or STORAGE_FAILED.
         * `licensed` and `expiresAt` are this computer's license as it stands (a request changes nothing of it).
         */
        LicenseStatus status;
        /** The file's content: JSON, format patchbay-machine-request/1. */
        std::string content;
        /** A name to offer when the user saves it: machine-request-<appId>.patchbay-request. */
        std::string filename;
    };

    /**
     * Activation, validation and deactivation against the Patchbay licensing runtime, and offline verification of
     * the stored license token against the pinned keys.
     *
     * The offline-grace contract: a license token carries `exp` = the moment it was issued + the product's
     * offline grace (never past the serial's own expiry). The plugin is licensed while the stored token verifies,
     * with or without network, and not after `exp`. Every successful validate() replaces the token with a fresh
     * one, which slides the window forward; a negative answer from the server (revoked, suspended, seat freed ...)
     * drops the token at once, while a missing answer (offline, server error, rate limit) never does.
     *
     * Calls block on the network: make them from a background thread, never from the audio thread. One client
     * may be shared between threads (calls are serialised).
     */
    class LicenseClient
    {
    public:
        LicenseClient (std::shared_ptr<HttpTransport> transport, LicenseOptions options = {});

        /** First run: binds this computer to the serial (idempotent per machine) and stores the token. */
        LicenseStatus activate (const std::string& serial);

        /** Start-up and every few hours: asks the server, refreshes the token, falls back to the stored token. */
        LicenseStatus validate();

        /** No network: is the stored token valid for this product, this machine and now? Fast enough for start-up. */
        LicenseStatus checkOffline();

        /** "Deactivate this computer": frees the seat on the server, then forgets the local license. */
        LicenseStatus deactivate();

        /**
         * Offline activation, step 1 (no network): the machine request file for `serial` ("" takes the stored
         * serial) on this computer, named `machineName` ("" takes LicenseOptions::machineName; the buyer sees it in
         * their portal). The buyer uploads it in the buyers' portal on a computer with internet. The request's nonce
         * is kept in the license file (the last five requests), so the answer can be recognised.
         */
        MachineRequest machineRequest (const std::string& serial, const std::string& machineName = {});

        /**
         * Offline activation, step 2 (no network): loads the content of the license file (.patchbay-license) the
         * portal answered. Its token is verified like any token (pinned key, signature, this product, this machine,
         * not expired) and must carry the nonce of a pending request of this computer; each request is answered
         * once. Then it is stored exactly as after an online activation: VALID, licensed until the token's `exp`, and
         * the next successful validate() takes over. A refused file changes nothing that was stored before.
         */
        LicenseStatus loadLicenseFile (const std::string& content);

        /** Checks any token against the pinned keys, this appId, this machine and now. */
        TokenCheck verifyToken (const std::string& token) const;

        const std::string& machineId() const noexcept { return machineId_; }
        const LicenseStore& store() const noexcept { return store_; }
        const TokenVerifier& verifier() const noexcept { return verifier_; }
        std::int64_t now() const;

    private:
        HttpResponse post (const std::string& path, const std::string& body);
        LicenseStatus offlineLocked (const StoredLicense* known = nullptr);
        LicenseStatus acceptToken (const std::string& serial, const std::string& token, const std::string& nonce, int httpStatus);
        /** The stored machine requests (nonces) still waiting for their license file. */
        std::vector<std::string> pendingRequests() const;

        std::shared_ptr<HttpTransport> transport_;
        LicenseOptions options_;
        std::string machineId_;
        TokenVerifier verifier_;
        LicenseStore store_;
        std::mutex lock_;
    };
}
