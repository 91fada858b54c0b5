// Offline activation: a machine request file out of a computer without internet, a license file in. The buyer carries
// the request to the buyers' portal on another computer, which answers the license file: the token the licensing
// runtime would have issued this machine online.
#include "PatchbayLicense.h"

#include "PatchbayJson.h"
#include "PatchbayMachine.h"

#include <algorithm>

namespace patchbay
{
    namespace
    {
        constexpr const char* machineRequestFormat = "patchbay-machine-request/1";
        constexpr const char* licenseFileFormat = "patchbay-license/1";
        /** Requests kept for their license files; writing more forgets the oldest. */
        constexpr std::size_t maxPendingRequests = 5;
        /** A license file is about a kilobyte; anything far larger is not one. */
        constexpr std::size_t maxLicenseFileBytes = 64 * 1024;
    }

    std::vector<std::string> LicenseClient::pendingRequests() const
    {
        StoredLicense stored;
        if (store_.load (stored) != LicenseStore::Load::ok)
            return {};
        return stored.requests;
    }

    MachineRequest LicenseClient::machineRequest (const std::string& serialText, const std::string& machineName)
    {
        const std::lock_guard<std::mutex> guard (lock_);
        MachineRequest out;
        StoredLicense stored;
        // A missing or unreadable license file holds nothing usable: the request starts a new one.
        if (store_.load (stored) != LicenseStore::Load::ok)
            stored = StoredLicense();
        out.status = offlineLocked (&stored);

        std::string serial = detail::trimSerial (serialText);
        if (serial.empty())
            serial = stored.serial;
        if (serial.empty())
        {
            out.status.code = "SERIAL_REQUIRED";
            out.status.detail = "Enter your serial number.";
            return out;
        }
        if (machineId_.empty() || ! ensureSodium())
        {
            out.status.code = "NO_MACHINE_ID";
            out.status.detail = "This computer could not be identified.";
            return out;
        }

        const std::string nonce = detail::newNonce();
        stored.requests.push_back (nonce);
        if (stored.requests.size() > maxPendingRequests)
            stored.requests.erase (stored.requests.begin(), stored.requests.end() - static_cast<std::ptrdiff_t> (maxPendingRequests));
        if (! store_.save (stored))
        {
            out.status.code = "STORAGE_FAILED";
            out.status.detail = "The request could not be remembered in " + store_.file().string() + ".";
            return out;
        }

        out.content = JsonObjectWriter()
                          .add ("format", machineRequestFormat)
                          .add ("productAppId", options_.appId)
                          .add ("serial", serial)
                          .add ("machineId", machineId_)
                          .addIfNotEmpty ("machineName", machineName.empty() ? options_.machineName : machineName)
                          .add ("platform", platformName())
                          .addIfNotEmpty ("appVersion", options_.appVersion)
                          .add ("nonce", nonce)
                          .str()
                      + "\n";
        out.filename = "machine-request-" + options_.appId + ".patchbay-request";
        out.status.code = "REQUEST_READY";
        out.status.detail = "Upload this request file in your account on a computer with internet, then load the license file you get there.";
        return out;
    }

    LicenseStatus LicenseClient::loadLicenseFile (const std::string& content)
    {
        const std::lock_guard<std::mutex> guard (lock_);
        // A refused file changes nothing: the answer says what is stored, with the reason of the refusal.
        auto refuse = [this] (const std::string& code, const std::string& why) {
            LicenseStatus status = offlineLocked();
            status.code = code;
            status.detail = why;
            return status;
        };

        std::string text = content;
        if (text.rfind ("\xEF\xBB\xBF", 0) == 0)
            text.erase (0, 3); // an editor's byte order mark
        JsonValue file;
        if (text.size() > maxLicenseFileBytes || ! JsonValue::parse (text, file) || ! file.isObject()
            || file["format"].asString() != licenseFileFormat || file["token"].asString().empty())
            return refuse ("LICENSE_FILE_UNREADABLE", "This is not a license file: choose the .patchbay-license file you downloaded.");
        if (file.has ("productAppId") && file["productAppId"].asString() != options_.appId)
            return refuse (tokenErrorCode (TokenError::wrongAudience), "This license file belongs to another product.");

        const std::string token = file["token"].asString();
        const TokenCheck check = verifyToken (token);
        if (check.error == TokenError::expired)
            return refuse (tokenErrorCode (check.error), "This license file has expired: write a new request file and upload it again.");
        if (! check.ok())
            return refuse (tokenErrorCode (check.error), tokenErrorText (check.error));
        if (check.claims.serial.empty())
            return refuse (tokenErrorCode (TokenError::malformed), tokenErrorText (TokenError::malformed));

        StoredLicense stored;
        if (store_.load (stored) != LicenseStore::Load::ok)
            stored = StoredLicense();
        const auto request = std::find (stored.requests.begin(), stored.requests.end(), check.claims.nonce);
        if (check.claims.nonce.empty() || request == stored.requests.end())
            return refuse ("TOKEN_REPLAYED", "This license file does not answer a request written on this computer, or it was loaded already: write a new request file.");

        stored.requests.erase (request);
        stored.serial = check.claims.serial;
        stored.token = token;
        if (! store_.save (stored))
            return refuse ("STORAGE_FAILED", "The license could not be saved in " + store_.file().string() + ".");

        LicenseStatus status;
        status.licensed = true;
        status.code = "VALID";
        status.detail = "Activated on this computer with a license file.";
        status.serial = stored.serial;
        status.expiresAt = check.claims.expiresAt;
        return status;
    }
}
