#include "PatchbayLicense.h"

#include "PatchbayBase64.h"
#include "PatchbayJson.h"
#include "PatchbayMachine.h"

#include <sodium.h>

#include <chrono>
#include <cstring>
#include <utility>

namespace patchbay
{
    std::string detail::trimSerial (const std::string& text)
    {
        const auto first = text.find_first_not_of (" \t\r\n");
        if (first == std::string::npos)
            return {};
        return text.substr (first, text.find_last_not_of (" \t\r\n") - first + 1);
    }

    std::string detail::newNonce()
    {
        unsigned char bytes[16];
        randombytes_buf (bytes, sizeof (bytes));
        return base64UrlEncode (bytes, sizeof (bytes));
    }

    namespace
    {

        /** The `code` and `detail` of a problem+json answer (or of any JSON object answer). */
        void readProblem (const HttpResponse& response, std::string& code, std::string& detail)
        {
            JsonValue body;
            if (JsonValue::parse (response.body, body) && body.isObject())
            {
                code = body["code"].asString();
                detail = body["detail"].asString();
                if (detail.empty())
                    detail = body["title"].asString();
            }
            if (code.empty())
                code = "SERVER_ERROR";
            if (detail.empty())
                detail = "The licensing server answered HTTP " + std::to_string (response.status) + ".";
        }

        /** Answers that say nothing about the license: the stored token keeps deciding. */
        bool isTransient (const HttpResponse& response)
        {
            return response.status == 0 || response.status == 401 || response.status == 408 || response.status == 429
                || response.status >= 500;
        }
    }

    ExperienceMode configuredExperience()
    {
        const std::string mode = config::experienceMode;
        if (mode == "storefront-only")
            return ExperienceMode::storefrontOnly;
        if (mode == "storefront-validation")
            return ExperienceMode::storefrontValidation;
        return ExperienceMode::validationOnly;
    }

    bool experienceValidates (ExperienceMode mode)
    {
        return mode != ExperienceMode::storefrontOnly;
    }

    bool experienceShowsStore (ExperienceMode mode)
    {
        return mode != ExperienceMode::validationOnly && std::strlen (config::storefrontUrl) > 0;
    }

    LicenseClient::LicenseClient (std::shared_ptr<HttpTransport> transport, LicenseOptions options)
        : transport_ (std::move (transport)),
          options_ (std::move (options)),
          machineId_ (options_.machineId.empty() ? machineIdFor (options_.appId) : options_.machineId),
          verifier_ (options_.pinnedJwks, options_.appId, options_.clockSkewSeconds),
          store_ (options_.licenseFile.empty() ? LicenseStore::defaultFile (options_.appId) : options_.licenseFile,
                  options_.appId,
                  options_.productKey,
                  machineId_)
    {
        while (! options_.baseUrl.empty() && options_.baseUrl.back() == '/')
            options_.baseUrl.pop_back();
    }

    std::int64_t LicenseClient::now() const
    {
        if (options_.clock)
            return options_.clock();
        return std::chrono::duration_cast<std::chrono::seconds> (std::chrono::system_clock::now().time_since_epoch()).count();
    }

    TokenCheck LicenseClient::verifyToken (const std::string& token) const
    {
        return verifier_.verify (token, machineId_, now());
    }

    HttpResponse LicenseClient::post (const std::string& path, const std::string& body)
    {
        if (! transport_)
        {
            HttpResponse none;
            none.error = "no HTTP transport";
            return none;
        }
        const std::vector<HttpHeader> headers {
            { "Content-Type", "application/json" },
            { "Accept", "application/json" },
            { "X-Product-Key", options_.productKey },
        };
        return transport_->send ("POST", options_.baseUrl + path, headers, body, options_.timeoutMs);
    }

    LicenseStatus LicenseClient::offlineLocked (const StoredLicense* known)
    {
        LicenseStatus status;
        StoredLicense stored;
        if (known != nullptr)
        {
            stored = *known;
        }
        else
        {
            switch (store_.load (stored))
            {
                case LicenseStore::Load::missing:
                    status.code = "NO_LICENSE";
                    status.detail = "This computer is not activated.";
                    return status;
                case LicenseStore::Load::tampered:
                    status.code = "STORAGE_TAMPERED";
                    status.detail = "The stored license could not be read on this computer: activate again.";
                    return status;
                case LicenseStore::Load::ok: break;
            }
        }

        status.serial = stored.serial;
        if (stored.serial.empty())
        {
            // Only machine requests waiting for their license file (offline activation) are stored.
            status.code = "NO_LICENSE";
            status.detail = "This computer is not activated.";
            return status;
        }
        if (stored.token.empty())
        {
            status.code = "NO_LICENSE";
            status.detail = "The license of this computer is not valid any more.";
            return status;
        }

        const TokenCheck check = verifyToken (stored.token);
        if (! check.ok())
        {
            status.code = tokenErrorCode (check.error);
            status.detail = tokenErrorText (check.error);
            return status;
        }
        status.licensed = true;
        status.code = "OFFLINE_VALID";
        status.detail = "Licensed on this computer.";
        status.expiresAt = check.claims.expiresAt;
        return status;
    }

    LicenseStatus LicenseClient::acceptToken (const std::string& serial, const std::string& token, const std::string& nonce, int httpStatus)
    {
        LicenseStatus status;
        status.serial = serial;
        status.httpStatus = httpStatus;

        // A token is stored only after it verified: the server's answer is checked like any stored token, and its
        // nonce must be the one this call sent, so an answer recorded earlier cannot be played back.
        const TokenCheck check = verifyToken (token);
        if (! check.ok())
        {
            status.code = tokenErrorCode (check.error);
            status.detail = tokenErrorText (check.error);
            return status;
        }
        if (check.claims.nonce != nonce)
        {
            status.code = "TOKEN_REPLAYED";
            status.detail = "The licensing server's answer does not belong to this request.";
            return status;
        }
        StoredLicense next;
        next.serial = serial;
        next.token = token;
        next.requests = pendingRequests();
        if (! store_.save (next))
        {
            status.code = "STORAGE_FAILED";
            status.detail = "The license could not be saved in " + store_.file().string() + ".";
            return status;
        }
        status.licensed = true;
        status.code = "VALID";
        status.detail = "Licensed on this computer.";
        status.expiresAt = check.claims.expiresAt;
        return status;
    }

    LicenseStatus LicenseClient::activate (const std::string& serialText)
    {
        const std::lock_guard<std::mutex> guard (lock_);
        const std::string serial = detail::trimSerial (serialText);
        LicenseStatus status;
        if (serial.empty())
        {
            status.code = "SERIAL_REQUIRED";
            status.detail = "Enter your serial number.";
            return status;
        }
        if (machineId_.empty() || ! ensureSodium())
        {
            status.code = "NO_MACHINE_ID";
            status.detail = "This computer could not be identified.";
            return status;
        }

        const std::string nonce = detail::newNonce();
        const HttpResponse response = post ("/activate",
                                            JsonObjectWriter()
                                                .add ("productAppId", options_.appId)
                                                .add ("serial", serial)
                                                .add ("machineId", machineId_)
                                                .add ("platform", platformName())
                                                .addIfNotEmpty ("appVersion", options_.appVersion)
                                                .addIfNotEmpty ("machineName", options_.machineName)
                                                .add ("nonce", nonce)
                                                .str());

        if (response.status == 200 || response.status == 201)
        {
            JsonValue body;
            JsonValue::parse (response.body, body);
            return acceptToken (serial, body["token"].asString(), nonce, response.status);
        }

        // Not activated by this call: whatever was stored before still decides whether the plugin runs.
        status = offlineLocked();
        status.httpStatus = response.status;
        if (response.status == 0)
        {
            status.code = "NETWORK_ERROR";
            status.detail = "The licensing server could not be reached (" + response.error + ").";
        }
        else
        {
            readProblem (response, status.code, status.detail);
        }
        return status;
    }

    LicenseStatus LicenseClient::validate()
    {
        const std::lock_guard<std::mutex> guard (lock_);
        StoredLicense stored;
        const auto loaded = store_.load (stored);
        if (loaded != LicenseStore::Load::ok || stored.serial.empty())
            return offlineLocked();

        const std::string nonce = detail::newNonce();
        const HttpResponse response = post ("/validate",
                                            JsonObjectWriter()
                                                .add ("productAppId", options_.appId)
                                                .add ("serial", stored.serial)
                                                .add ("machineId", machineId_)
                                                .add ("nonce", nonce)
                                                .str());

        JsonValue body;
        const bool answered = response.status == 200 && JsonValue::parse (response.body, body) && body["valid"].isBool();
        if (! answered || isTransient (response))
        {
            // No verdict from the server: the offline grace of the stored token applies.
            LicenseStatus status = offlineLocked (&stored);
            status.httpStatus = response.status;
            if (status.licensed)
                status.detail = "Licensed (the licensing server could not confirm it just now).";
            if (response.status == 0)
                status.detail += " No connection: " + response.error;
            return status;
        }

        if (body["valid"].asBool())
            return acceptToken (stored.serial, body["token"].asString(), nonce, response.status);

        // A verdict: the license is not valid for this machine any more. Keep the serial for the panel.
        StoredLicense ended = stored;
        ended.token.clear();
        store_.save (ended);
        LicenseStatus status;
        status.serial = stored.serial;
        status.httpStatus = response.status;
        status.code = body["code"].asString().empty() ? "SERVER_ERROR" : body["code"].asString();
        status.detail = body["detail"].asString();
        return status;
    }

    LicenseStatus LicenseClient::checkOffline()
    {
        const std::lock_guard<std::mutex> guard (lock_);
        return offlineLocked();
    }

    LicenseStatus LicenseClient::deactivate()
    {
        const std::lock_guard<std::mutex> guard (lock_);
        StoredLicense stored;
        if (store_.load (stored) != LicenseStore::Load::ok || stored.serial.empty())
            return offlineLocked();

        const HttpResponse response = post ("/deactivate",
                                            JsonObjectWriter()
                                                .add ("productAppId", options_.appId)
                                                .add ("serial", stored.serial)
                                                .add ("machineId", machineId_)
                                                .str());
        if (response.status == 200)
        {
            JsonValue body;
            JsonValue::parse (response.body, body);
            store_.clear();
            LicenseStatus status;
            status.serial = stored.serial;
            status.httpStatus = 200;
            status.released = body["released"].asBool();
            status.code = "RELEASED";
            status.detail = "This computer is deactivated; its seat is free.";
            return status;
        }

        // Nothing changed on the server, so nothing changes here: try again when online.
        LicenseStatus status = offlineLocked (&stored);
        status.httpStatus = response.status;
        if (response.status == 0)
        {
            status.code = "NETWORK_ERROR";
            status.detail = "The licensing server could not be reached (" + response.error + "); this computer is still activated.";
        }
        else
        {
            readProblem (response, status.code, status.detail);
        }
        return status;
    }
}
